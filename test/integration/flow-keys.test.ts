import { GetCommand } from "@aws-sdk/lib-dynamodb";
import pLimit from "p-limit";
import { ulid } from "ulid";
import { describe, expect, it, vi } from "vitest";
import * as z from "zod";
import type { Clock } from "../../lib/clock.ts";
import { ClientError, ThrottledError } from "../../lib/errors.ts";
import { freeStalePlaces } from "../../lib/flow/flow-places.ts";
import { Flow } from "../../lib/flow/flow-service.ts";
import { flowKey } from "../../lib/job/flow-key.ts";
import { defineUnboundKind } from "../../lib/job/kind.ts";
import { runReaper } from "../../lib/ops/reaper.ts";
import {
  freeKeyPlaces,
  parkJob,
  passKeyPlaces,
  readFlowKeyState,
  renewKeyPlace,
  takeKeyPlace,
} from "../../lib/store/flow-key-ops.ts";
import type { JobItem } from "../../lib/store/job-item.ts";
import { flowKeyStateKey, PARK_INDEX_SHARDS, parkShard } from "../../lib/store/keys.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import { messageFromItem } from "../../lib/transport/message-from-item.ts";
import { OffsetClock } from "../support/clock.ts";
import { type Harness, harnessPerTest, settled } from "../support/engine-harness.ts";
import { mostAtOnce } from "../support/overlap.ts";
import { waitFor } from "../support/wait.ts";

/**
 * Flow control per key (docs/guide/flow-control.md, docs/architecture.md §20) on the real emulators: a
 * key's runs never exceed its concurrency, a key at its limit parks its jobs (no receive loop) and
 * starts them in arrival order as places free, another key isn't held back, a throttle cools one
 * key, a key's rate spaces its starts, and places left held by ended runs come back.
 */
type Run = {
  id: string;
  tenant: string;
  seq: number;
  start: number;
  end: number;
  attempt: number;
  at: number;
};
const runs: Run[] = [];
const throttled = new Set<string>();
const Job = z.object({
  tenant: z.string(),
  seq: z.number(),
  ms: z.number().default(150),
  throttle: z.boolean().optional(),
});
const keyed = defineUnboundKind({
  name: "t-keyed",
  queue: "default",
  payload: Job,
  maxAttempts: 3,
  timeoutSeconds: 30,
  flow: { key: (p) => p.tenant, concurrency: (tenant) => (tenant.startsWith("gold-") ? 3 : 2) },
  handler: async (p, ctx) => {
    // The partner refuses the key's first call only.
    if (p.throttle && !throttled.has(p.tenant)) {
      throttled.add(p.tenant);
      throw new ThrottledError(2, "partner says slow down");
    }
    const start = performance.now();
    await new Promise((r) => setTimeout(r, p.ms));
    runs.push({
      at: Date.now() - (performance.now() - start),
      id: ctx.job.id,
      tenant: p.tenant,
      seq: p.seq,
      start,
      end: performance.now(),
      attempt: ctx.attempt,
    });
    return { seq: p.seq };
  },
});
const rated = defineUnboundKind({
  name: "t-rated",
  queue: "default",
  payload: Job,
  maxAttempts: 3,
  timeoutSeconds: 30,
  flow: { key: (p) => p.tenant, rate: { limit: 5, periodSeconds: 1, burst: 2 } },
  handler: async (p, ctx) => {
    const now = performance.now();
    runs.push({
      id: ctx.job.id,
      tenant: p.tenant,
      seq: p.seq,
      start: now,
      end: now,
      attempt: 1,
      at: Date.now(),
    });
    return null;
  },
});
/** One place a key: a key whose place is held waits, whatever else the reaper looks at. */
const solo = defineUnboundKind({
  name: "t-solo",
  queue: "default",
  payload: Job,
  maxAttempts: 3,
  timeoutSeconds: 30,
  flow: { key: (p) => p.tenant, concurrency: 1 },
  handler: async () => null,
});
const kinds = [keyed, rated, solo];
const harness = harnessPerTest();

/**
 * `busy` keys of t-solo, each with a job parked behind a place a live run holds (given now, to a run
 * the reaper must leave alone), all in parked-index shards before the last; then one victim key in
 * the last shard, whose place a run that never got a job item took long ago (lost: a crash before
 * its hand-over), with a job parked behind it that only the reaper can send on. result: the victim.
 */
async function crowdedIndex(h: Harness, busy: number, now: number) {
  const { store } = h.engine;
  const parkOne = async (tenant: string, createdAt: number) => {
    const id = ulid();
    const seed = {
      id,
      kind: "t-solo",
      queue: "default",
      maxAttempts: 3,
      priority: "normal" as const,
      createdAt,
      runAt: createdAt,
      timeoutSeconds: 30,
      flowKey: tenant,
      payload: JSON.stringify({ tenant, seq: 0, ms: 0 }),
    };
    expect(await parkJob(store, seed, flowKey("t-solo", tenant), createdAt)).toBe(true);
    return id;
  };
  const shardOfKey = (tenant: string) => parkShard(flowKey("t-solo", tenant));
  const last = PARK_INDEX_SHARDS - 1;
  const tenants: string[] = [];
  for (let n = 0; tenants.length < busy; n++) if (shardOfKey(`busy-${n}`) < last) tenants.push(`busy-${n}`);
  const victim = ["victim", ...Array.from({ length: 100 }, (_, n) => `victim-${n}`)].find(
    (t) => shardOfKey(t) === last,
  ) as string;
  const writes = pLimit(16);
  await Promise.all(
    tenants.map((tenant) =>
      writes(async () => {
        expect(await takeKeyPlace(store, flowKey("t-solo", tenant), ulid(), 1, now)).toBe(true);
        await parkOne(tenant, now);
      }),
    ),
  );
  const leaseMs = (h.engine.queues.find((q) => q.name === "default")?.leaseSeconds ?? 0) * 1000;
  expect(await takeKeyPlace(store, flowKey("t-solo", victim), ulid(), 1, now - 3 * leaseMs)).toBe(true);
  return { tenant: victim, id: await parkOne(victim, now) };
}

/** The most runs of `tenant` going at any one instant. */
const peak = (tenant: string) =>
  mostAtOnce(runs.filter((r) => r.tenant === tenant).map((r) => [r.start, r.end] as const));

describe("flow control per key", () => {
  it("a flood from one key runs at most its concurrency at once, in arrival order once parked, and doesn't hold another key back", async () => {
    const h = await harness.create({ clock: new OffsetClock(), extraKinds: kinds });
    const flood = await h.engine.producer.enqueueBatch(
      Array.from({ length: 30 }, (_, seq) => ({ kind: "t-keyed", payload: { tenant: "flood", seq } })),
    );
    const gold = await h.engine.producer.enqueueBatch(
      Array.from({ length: 6 }, (_, seq) => ({ kind: "t-keyed", payload: { tenant: "gold-1", seq } })),
    );
    const other = await h.engine.producer.enqueue({ kind: "t-keyed", payload: { tenant: "calm", seq: 0 } });
    h.startPoller();
    await settled(h, other.job.id, "done");
    // The calm key's one job didn't wait for the flood's line (30 jobs, 2 at a time, 150 ms each).
    expect(runs.filter((r) => r.tenant === "flood").length).toBeLessThan(20);
    const parkedView = await waitFor(async () => {
      for (const r of flood) {
        const job = await getJob(h.engine.store, r.id ?? "");
        if (job?.parked && job.status === "queued") return job;
      }
      return undefined;
    }, "a parked flood job");
    expect(parkedView.flowKey).toBe("flood");
    for (const r of [...flood, ...gold]) await settled(h, r.id ?? "", "done");
    expect(peak("flood")).toBeLessThanOrEqual(2);
    expect(peak("gold-1")).toBeLessThanOrEqual(3);
    expect(peak("flood")).toBe(2);
    expect(h.metrics.total("keyParked")).toBeGreaterThan(0);
    // Parked jobs start oldest first (arrival time, then id; one batch's jobs arrived together): the
    // flood's last 20 starts are in id order.
    const order = runs.filter((r) => r.tenant === "flood").map((r) => r.id);
    expect(order.slice(-20)).toEqual([...order.slice(-20)].sort());
    // Every place went back (each after its job's finalize: awaited, bounded): no run holds one.
    await waitFor(
      async () =>
        Object.keys((await readFlowKeyState(h.engine.store, flowKey("t-keyed", "flood"))).holders).length ===
        0,
      "every flood place to be handed back",
    );
  });

  it("under saturation each key's share of starts follows its concurrency (weights 3 : 2) within 20%", async () => {
    const h = await harness.create({ clock: new OffsetClock(), extraKinds: kinds });
    const enqueue = (tenant: string) =>
      h.engine.producer.enqueueBatch(
        Array.from({ length: 45 }, (_, seq) => ({ kind: "t-keyed", payload: { tenant, seq, ms: 200 } })),
      );
    const [gold, plain] = await Promise.all([enqueue("gold-w"), enqueue("plain-w")]);
    h.startPoller();
    for (const r of [...(gold ?? []), ...(plain ?? [])]) await settled(h, r.id ?? "", "done");
    // While both keys had a backlog: until the first of them started its last job.
    const lastStart = (tenant: string) =>
      Math.max(...runs.filter((r) => r.tenant === tenant).map((r) => r.start));
    const busyUntil = Math.min(lastStart("gold-w"), lastStart("plain-w"));
    const startsBefore = (tenant: string) =>
      runs.filter((r) => r.tenant === tenant && r.start <= busyUntil).length;
    const ratio = startsBefore("gold-w") / startsBefore("plain-w");
    expect(ratio).toBeGreaterThanOrEqual(1.5 * 0.8);
    expect(ratio).toBeLessThanOrEqual(1.5 * 1.2);
  });

  it("a throttle raised for a key cools that key only, its attempt unspent", async () => {
    const h = await harness.create({ clock: new OffsetClock(), extraKinds: kinds });
    h.startPoller();
    const hot = await h.engine.producer.enqueue({
      kind: "t-keyed",
      payload: { tenant: "hot", seq: 0, throttle: true },
    });
    const coolUntil = await waitFor(
      async () => (await readFlowKeyState(h.engine.store, flowKey("t-keyed", "hot"))).coolUntil,
      "the hot key to cool",
    );
    const cold = await h.engine.producer.enqueue({ kind: "t-keyed", payload: { tenant: "cold", seq: 0 } });
    const hot2 = await h.engine.producer.enqueue({ kind: "t-keyed", payload: { tenant: "hot", seq: 1 } });
    await settled(h, cold.job.id, "done");
    // The cold key ran while the hot one cooled (2 s).
    expect(runs.some((r) => r.tenant === "hot")).toBe(false);
    const first = await settled(h, hot.job.id, "done");
    await settled(h, hot2.job.id, "done");
    expect(first.attempts).toBe(1);
    expect(h.metrics.total("throttled")).toBe(1);
    // Neither hot job started before the key's cool-down ended (the clock is the wall clock here).
    for (const r of runs.filter((x) => x.tenant === "hot"))
      expect(r.at).toBeGreaterThanOrEqual(coolUntil - 50);
  });

  it("a key's rate spaces its starts: a burst, then one per interval", async () => {
    const h = await harness.create({ clock: new OffsetClock(), extraKinds: kinds });
    const ids = await h.engine.producer.enqueueBatch(
      Array.from({ length: 8 }, (_, seq) => ({ kind: "t-rated", payload: { tenant: "r", seq } })),
    );
    h.startPoller();
    for (const r of ids) await settled(h, r.id ?? "", "done");
    const starts = runs
      .filter((r) => r.tenant === "r")
      .map((r) => r.start)
      .sort((a, b) => a - b);
    // 5 a second with a burst of 2: the 3rd start waits ≥ 200 ms after the 1st, the 8th ≥ 1.2 s.
    expect((starts[2] ?? 0) - (starts[0] ?? 0)).toBeGreaterThanOrEqual(150);
    expect((starts[7] ?? 0) - (starts[0] ?? 0)).toBeGreaterThanOrEqual(1100);
  });

  it("places left held by runs that ended come back: at the next arrival, and by the reaper for a parked job", async () => {
    const h = await harness.create({ clock: new OffsetClock(), extraKinds: kinds });
    const { store, clock } = h.engine;
    // Two finished runs whose hand-over never happened (a crash after their finalize).
    const done = await h.engine.producer.enqueueBatch(
      [0, 1].map((seq) => ({ kind: "t-keyed", payload: { tenant: "crashy", seq, ms: 0 } })),
    );
    h.startPoller();
    for (const r of done) await settled(h, r.id ?? "", "done");
    // Their real hand-overs follow their finalizes: awaited (bounded), so none runs after the crash is staged.
    await waitFor(
      async () =>
        Object.keys((await readFlowKeyState(store, flowKey("t-keyed", "crashy"))).holders).length === 0,
      "the two runs' places to be handed back",
    );
    for (const r of done)
      expect(await takeKeyPlace(store, flowKey("t-keyed", "crashy"), r.id ?? "", 2, clock.now())).toBe(true);
    // A job parked behind them by a worker that died before it looked at the key again (no
    // message, nobody to free the ended runs' places): only the reaper can send it on.
    const now = clock.now();
    const late = {
      id: ulid(),
      kind: "t-keyed",
      queue: "default",
      maxAttempts: 3,
      priority: "normal" as const,
      createdAt: now,
      runAt: now,
      timeoutSeconds: 30,
      flowKey: "crashy",
      payload: JSON.stringify({ tenant: "crashy", seq: 2, ms: 0 }),
    };
    expect(await parkJob(store, late, flowKey("t-keyed", "crashy"), late.runAt)).toBe(true);
    const report = await runReaper(h.engine, { staleSweepPassMs: 0 });
    expect(report.flowJobsSent).toBe(1);
    await settled(h, late.id, "done");
    // A new arrival finds the key free again.
    const next = await h.engine.producer.enqueue({
      kind: "t-keyed",
      payload: { tenant: "crashy", seq: 3, ms: 0 },
    });
    await settled(h, next.job.id, "done");
    // The place goes on after the job's finalize (done first, then the hand-over): awaited, bounded.
    await waitFor(
      async () =>
        Object.keys((await readFlowKeyState(store, flowKey("t-keyed", "crashy"))).holders).length === 0,
      "the last run's place to be handed back",
    );
  });

  it("a crash's place is freed though another ended run's hand-over passes its own place between the look's read and its free", async () => {
    const h = await harness.create({ clock: new OffsetClock(), extraKinds: kinds });
    const { store, clock } = h.engine;
    const fk = flowKey("t-keyed", "cut");
    const [crashed, ending] = await h.engine.producer.enqueueBatch(
      [0, 1].map((seq) => ({ kind: "t-keyed", payload: { tenant: "cut", seq, ms: 0 } })),
    );
    h.startPoller();
    for (const r of [crashed, ending]) await settled(h, r?.id ?? "", "done");
    await waitFor(
      async () => Object.keys((await readFlowKeyState(store, fk)).holders).length === 0,
      "the two runs' places to be handed back",
    );
    // Both runs ended holding their places: `crashed`'s hand-over was cut by a crash, `ending`'s is
    // on its way. The look reads the key while both hold...
    const [a, b] = [crashed?.id ?? "", ending?.id ?? ""];
    for (const id of [a, b]) expect(await takeKeyPlace(store, fk, id, 2, clock.now())).toBe(true);
    const read = await readFlowKeyState(store, fk);
    // ...then `ending`'s hand-over passes its place to the line's next job before the look frees.
    const next = ulid();
    expect(await passKeyPlaces(store, fk, [{ from: b, to: next }], clock.now())).toBe(true);
    expect(await freeStalePlaces(h.engine, fk, read, clock.now())).toBe(1);
    expect(Object.keys((await readFlowKeyState(store, fk)).holders)).toEqual([next]);
  });

  it("the reaper reaches a lost place behind more than 200 waiting keys: the victim is sent on within two runs", async () => {
    const h = await harness.create({ clock: new OffsetClock(), extraKinds: kinds });
    const now = h.engine.clock.now();
    const victim = await crowdedIndex(h, 210, now);
    // The reaper's own clock stands still: its time budget is not what this is about.
    const reaper = withClock(h.engine, { now: () => now });
    const reports = [];
    for (let run = 0; run < 2; run++) {
      const report = await runReaper(reaper, { staleSweepPassMs: 0 });
      reports.push(report);
      if (report.flowJobsSent > 0) break;
    }
    expect(reports.map((r) => r.flowJobsSent)).toContain(1);
    expect((await readFlowKeyState(h.engine.store, flowKey("t-solo", victim.tenant))).holders).toEqual({
      [victim.id]: now,
    });
    expect(reports.at(-1)?.flowKeysChecked).toBeGreaterThan(200);
  });

  it("a run out of time stops where it is, and the next goes on from there: every waiting key is looked at in turn", async () => {
    const h = await harness.create({ clock: new OffsetClock(), extraKinds: kinds });
    const now = h.engine.clock.now();
    const busy = 60;
    const victim = await crowdedIndex(h, busy, now);
    // A clock that moves 1 ms each time it is read: a budget of 50 ms is a few keys' looks.
    let ticks = 0;
    const reaper = withClock(h.engine, { now: () => now + ticks++ });
    const checked: number[] = [];
    let sent = 0;
    while (sent === 0 && checked.length < busy + 1) {
      const report = await runReaper(reaper, { staleSweepPassMs: 0, flowHealBudgetMs: 50 });
      checked.push(report.flowKeysChecked);
      sent = report.flowJobsSent;
    }
    expect(sent).toBe(1);
    // Each run looked at some keys, not all: the budget cut it short.
    for (const n of checked) expect(n).toBeGreaterThan(0);
    expect(checked[0]).toBeLessThan(busy + 1);
    // No run started over: the victim, last in the index, came after each busy key was looked at once.
    const before = checked.slice(0, -1).reduce((a, b) => a + b, 0);
    expect(before).toBeLessThan(busy + 1);
    expect(before + (checked.at(-1) ?? 0)).toBeGreaterThanOrEqual(busy + 1);
    expect(checked.length).toBeGreaterThan(1);
    expect(
      Object.keys((await readFlowKeyState(h.engine.store, flowKey("t-solo", victim.tenant))).holders),
    ).toEqual([victim.id]);
  });

  it("a job enqueued while its key is full waits in the key's line from the start: no message until a place frees", async () => {
    const h = await harness.create({ clock: new OffsetClock(), extraKinds: kinds });
    h.startPoller();
    const first = await h.engine.producer.enqueueBatch(
      [0, 1].map((seq) => ({ kind: "t-keyed", payload: { tenant: "full", seq, ms: 600 } })),
    );
    await waitFor(
      async () =>
        Object.keys((await readFlowKeyState(h.engine.store, flowKey("t-keyed", "full"))).holders).length ===
          2 || undefined,
      "the key's two places taken",
    );
    const sent = h.metrics.total("keyParked");
    const later = await h.engine.producer.enqueueBatch(
      [2, 3, 4].map((seq) => ({ kind: "t-keyed", payload: { tenant: "full", seq, ms: 0 } })),
    );
    const single = await h.engine.producer.enqueue({
      kind: "t-keyed",
      payload: { tenant: "full", seq: 5, ms: 0 },
    });
    for (const id of [...later.map((r) => r.id ?? ""), single.job.id])
      expect(await getJob(h.engine.store, id)).toMatchObject({ status: "queued", parked: true });
    expect(h.metrics.total("keyParked") - sent).toBe(4);
    for (const r of [...first, ...later]) await settled(h, r.id ?? "", "done");
    await settled(h, single.job.id, "done");
    expect(peak("full")).toBeLessThanOrEqual(2);
  });

  it("a call of more jobs than its key has places sends as many as there are places; the rest wait in the line from the start", async () => {
    const h = await harness.create({ clock: new OffsetClock(), extraKinds: kinds });
    const parkedBefore = h.metrics.total("keyParked");
    const answers = await h.engine.producer.enqueueBatch(
      [0, 1, 2, 3, 4, 5].map((seq) => ({ kind: "t-keyed", payload: { tenant: "burst", seq, ms: 0 } })),
    );
    const items = await Promise.all(answers.map((a) => getJob(h.engine.store, a.id ?? "")));
    // The first two go to their gates; the other four are parked by the enqueue's own write.
    expect(items.map((i) => i?.parked === true)).toEqual([false, false, true, true, true, true]);
    expect(h.metrics.total("keyParked") - parkedBefore).toBe(4);
    // The look after parking leaves the two places to the jobs on their way to them.
    expect((await readFlowKeyState(h.engine.store, flowKey("t-keyed", "burst"))).holders).toEqual({});
    h.startPoller();
    for (const a of answers) await settled(h, a.id ?? "", "done");
    expect(peak("burst")).toBeLessThanOrEqual(2);
    expect(h.metrics.total("keyParked") - parkedBefore).toBe(4);
  });

  it("of a call's jobs, those first in line by priority take the free places; the rest are parked", async () => {
    const h = await harness.create({ clock: new OffsetClock(), extraKinds: kinds });
    const priorities = [1, 1, 3, 5, 1, 5];
    const answers = await h.engine.producer.enqueueBatch(
      priorities.map((priority, seq) => ({
        kind: "t-keyed",
        payload: { tenant: "ranked", seq, ms: 0 },
        priority,
      })),
    );
    const items = await Promise.all(answers.map((a) => getJob(h.engine.store, a.id ?? "")));
    expect(items.map((i) => i?.parked === true)).toEqual([true, true, true, false, true, false]);
  });

  it("a job that parks while the key's last run hands its place back (the line read before it parked, the place freed after its look) is sent at once, not left to the reaper", async () => {
    const h = await harness.create({ clock: new OffsetClock(), extraKinds: kinds });
    const { store } = h.engine;
    const fk = flowKey("t-solo", "race");
    const running = ulid();
    expect(await takeKeyPlace(store, fk, running, 1, h.engine.clock.now())).toBe(true);
    // The run's hand-over reads the line (empty), then frees the place: in between, a job is enqueued,
    // parks (the key is full) and looks at the key (still full, so it leaves it).
    const send = store.doc.send.bind(store.doc);
    let parked: string | undefined;
    const spy = vi.spyOn(store.doc, "send").mockImplementation((async (
      command: Parameters<typeof send>[0],
    ) => {
      const input = (command as { input?: { Key?: { pk?: string }; UpdateExpression?: string } }).input;
      const freesTheRun =
        parked === undefined &&
        input?.Key?.pk === flowKeyStateKey(fk).pk &&
        input.UpdateExpression?.startsWith("REMOVE") === true;
      if (freesTheRun) {
        parked = "";
        const answer = await h.engine.producer.enqueue({
          kind: "t-solo",
          payload: { tenant: "race", seq: 1, ms: 0 },
        });
        parked = answer.job.id;
        expect(await getJob(store, parked)).toMatchObject({ parked: true });
      }
      return send(command);
    }) as never);
    try {
      await h.engine.flow.leavePlace({ id: running, kind: "t-solo", flowKey: "race" } as JobItem);
    } finally {
      spy.mockRestore();
    }
    expect(parked).toBeTruthy();
    expect(Object.keys((await readFlowKeyState(store, fk)).holders)).toEqual([parked]);
  });

  it("two runs of a key in two processes whose hand-overs overlap pass their places to two jobs without a refused write: the key's state is read after the line", async () => {
    const h = await harness.create({ clock: new OffsetClock(), extraKinds: kinds });
    const { a, b, waiting, writesDuring } = await pairOfRuns(h);
    // A's hand-over makes its first read, then B's whole hand-over runs in another process.
    const other = new Flow(h.engine);
    let aStarted = false;
    const { refused } = await writesDuring(
      async (command, send) => {
        const first = !aStarted;
        aStarted = true;
        try {
          return await send(command);
        } finally {
          if (first) await other.leavePlace(b);
        }
      },
      () => h.engine.flow.leavePlace(a),
    );
    expect(Object.keys((await readFlowKeyState(h.engine.store, pairKey)).holders).sort()).toEqual(waiting);
    expect(refused).toBe(0);
  });

  it("two runs of a key in one process that end together pass their places to two jobs in one write: the second hand-over joins the first, which was reading", async () => {
    const h = await harness.create({ clock: new OffsetClock(), extraKinds: kinds });
    const { a, b, waiting, writesDuring } = await pairOfRuns(h);
    const { refused, stateWrites } = await writesDuring(
      (command, send) => send(command),
      () => Promise.all([h.engine.flow.leavePlace(a), h.engine.flow.leavePlace(b)]),
    );
    // B's hand-over came while A's read the line: both places change hands in A's one write.
    expect(stateWrites).toBe(1);
    expect(Object.keys((await readFlowKeyState(h.engine.store, pairKey)).holders).sort()).toEqual(waiting);
    expect(refused).toBe(0);
  });

  it("a run's hand-over asked for twice at once (a duplicate finalize) joined with another's: each place changes hands once, in one write", async () => {
    const h = await harness.create({ clock: new OffsetClock(), extraKinds: kinds });
    const { a, b, waiting, writesDuring } = await pairOfRuns(h);
    const { refused, stateWrites } = await writesDuring(
      (command, send) => send(command),
      () => Promise.all([a, a, b].map((run) => h.engine.flow.leavePlace(run))),
    );
    expect(Object.keys((await readFlowKeyState(h.engine.store, pairKey)).holders).sort()).toEqual(waiting);
    expect({ refused, stateWrites }).toEqual({ refused: 0, stateWrites: 1 });
  });

  it("of two hand-overs joined with one job waiting, one place goes to it and the other back to the key", async () => {
    const h = await harness.create({ clock: new OffsetClock(), extraKinds: kinds });
    const { a, b, waiting, writesDuring } = await pairOfRuns(h, 1);
    const { refused, stateWrites } = await writesDuring(
      (command, send) => send(command),
      () => Promise.all([h.engine.flow.leavePlace(a), h.engine.flow.leavePlace(b)]),
    );
    expect(Object.keys((await readFlowKeyState(h.engine.store, pairKey)).holders)).toEqual(waiting);
    expect({ refused, stateWrites }).toEqual({ refused: 0, stateWrites: 2 });
  });

  it("an entry that joins while the key's state is read, with a place taken after that read, hands it on: the state is read again", async () => {
    const h = await harness.create({ clock: new OffsetClock(), extraKinds: kinds });
    const { store } = h.engine;
    const { a, b, waiting, writesDuring } = await pairOfRuns(h);
    // b holds no place at A's read of the state: b takes one once that read is answered, then gives
    // it back (a gate's give-back to wait), joining A's hand-over.
    const held = await readFlowKeyState(store, pairKey);
    expect(await freeKeyPlaces(store, pairKey, { [b.id]: held.holders[b.id] as number })).toBe(true);
    let joined: Promise<void> | undefined;
    await writesDuring(
      async (command, send) => {
        const out = await send(command);
        const key = (command as { input?: { Key?: { pk?: string } } }).input?.Key?.pk;
        if (joined === undefined && command instanceof GetCommand && key === flowKeyStateKey(pairKey).pk) {
          expect(await takeKeyPlace(store, pairKey, b.id, 2, h.engine.clock.now())).toBe(true);
          joined = h.engine.flow.leavePlace(b);
        }
        return out;
      },
      () => h.engine.flow.leavePlace(a),
    );
    await joined;
    expect(Object.keys((await readFlowKeyState(store, pairKey)).holders).sort()).toEqual(waiting);
  });

  it("a joined hand-over whose free is refused (a giver's place renewed meanwhile) reads the state again and frees it", async () => {
    const h = await harness.create({ clock: new OffsetClock(), extraKinds: kinds });
    const { store } = h.engine;
    const { a, b, waiting, writesDuring } = await pairOfRuns(h, 1);
    let renewed = false;
    await writesDuring(
      async (command, send) => {
        const update = (command as { input?: { UpdateExpression?: string } }).input?.UpdateExpression ?? "";
        const frees = update.startsWith("REMOVE") && !update.includes("SET");
        if (frees && !renewed) {
          renewed = true;
          const held = (await readFlowKeyState(store, pairKey)).holders;
          for (const run of [a, b])
            if (held[run.id] !== undefined)
              expect(
                await renewKeyPlace(
                  store,
                  pairKey,
                  run.id,
                  held[run.id] as number,
                  (held[run.id] as number) + 1,
                ),
              ).toBe(true);
        }
        return send(command);
      },
      () => Promise.all([h.engine.flow.leavePlace(a), h.engine.flow.leavePlace(b)]),
    );
    expect(renewed).toBe(true);
    expect(Object.keys((await readFlowKeyState(store, pairKey)).holders)).toEqual(waiting);
  });

  it("a late copy of a finished job's message takes no place for good", async () => {
    const h = await harness.create({ clock: new OffsetClock(), extraKinds: kinds });
    h.startPoller();
    const { job } = await h.engine.producer.enqueue({
      kind: "t-keyed",
      payload: { tenant: "late", seq: 0, ms: 0 },
    });
    const done = await settled(h, job.id, "done");
    // SQS hands out a copy again (at least once): its gate finds a free place, its claim a done job.
    await h.engine.transport.send({ message: messageFromItem(done, done.payload), delaySeconds: 0 });
    await waitFor(async () => h.metrics.total("duplicateDeliveries") > 0 || undefined, "the copy's delivery");
    await waitFor(
      async () =>
        Object.keys((await readFlowKeyState(h.engine.store, flowKey("t-keyed", "late"))).holders).length ===
        0,
      "the copy's place to be handed back",
    );
  });

  it("refuses a key function that throws or a concurrency function that gives no whole number: 400 naming the kind", async () => {
    const bad = defineUnboundKind({
      name: "t-bad-flow",
      queue: "default",
      payload: Job,
      maxAttempts: 1,
      timeoutSeconds: 30,
      flow: {
        key: (p) => (p.seq < 0 ? JSON.parse("{") : p.tenant),
        concurrency: (tenant) => (tenant === "zero" ? 0 : 1),
      },
      handler: async () => null,
    });
    const h = await harness.create({ clock: new OffsetClock(), extraKinds: [bad] });
    for (const payload of [
      { tenant: "a", seq: -1 },
      { tenant: "zero", seq: 1 },
      { tenant: "x".repeat(257), seq: 1 },
    ]) {
      const err = await h.engine.producer.enqueue({ kind: "t-bad-flow", payload }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ClientError);
      expect((err as ClientError).message).toContain('kind "t-bad-flow"');
    }
    expect(h.metrics.total("enqueued")).toBe(0);
  });
});

const pairKey = flowKey("t-keyed", "pair");

/**
 * Two runs, a and b, holding both places of a key of t-keyed, and `waitingJobs` enqueued behind them
 * (parked); `writesDuring` runs `act` with every store command passed through `through`, and counts
 * the conditional writes refused meanwhile and the writes to the key's state item.
 */
async function pairOfRuns(h: Harness, waitingJobs = 2) {
  const { store } = h.engine;
  const endingRun = () => ({ id: ulid(), kind: "t-keyed", flowKey: "pair" }) as JobItem;
  const [a, b] = [endingRun(), endingRun()];
  for (const run of [a, b])
    expect(await takeKeyPlace(store, pairKey, run.id, 2, h.engine.clock.now())).toBe(true);
  const waiting: string[] = [];
  for (let seq = 1; seq <= waitingJobs; seq++) {
    const answer = await h.engine.producer.enqueue({
      kind: "t-keyed",
      payload: { tenant: "pair", seq, ms: 0 },
    });
    waiting.push(answer.job.id);
  }
  type Send = typeof store.doc.send;
  type Command = Parameters<Send>[0];
  async function writesDuring(
    through: (command: Command, send: (c: Command) => Promise<unknown>) => Promise<unknown>,
    act: () => Promise<unknown>,
  ) {
    const send = store.doc.send.bind(store.doc) as (c: Command) => Promise<unknown>;
    let refused = 0;
    let stateWrites = 0;
    const spy = vi.spyOn(store.doc, "send").mockImplementation((async (command: Command) => {
      const input = (command as { input?: { Key?: { pk?: string }; Item?: { pk?: string } } }).input;
      if ((input?.Key ?? input?.Item)?.pk === flowKeyStateKey(pairKey).pk && !(command instanceof GetCommand))
        stateWrites++;
      try {
        return await through(command, send);
      } catch (error) {
        if ((error as Error).name === "ConditionalCheckFailedException") refused++;
        throw error;
      }
    }) as never);
    try {
      await act();
    } finally {
      spy.mockRestore();
    }
    return { refused, stateWrites };
  }
  return { a, b, waiting: waiting.sort(), writesDuring };
}

/** The engine on another clock, its flow control's too (the reaper reaches it through Engine.flow). */
function withClock<E extends ConstructorParameters<typeof Flow>[0]>(engine: E, clock: Clock) {
  const deps = { ...engine, clock };
  return { ...deps, flow: new Flow(deps) };
}
