import { setTimeout as delay } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { ClientError } from "../../lib/errors.ts";
import { collectKindDefinition } from "../../lib/job/collect.ts";
import { defineUnboundKind } from "../../lib/job/kind.ts";
import type { EnqueueResult } from "../../lib/job/schemas.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import { HoldableClock, OffsetClock } from "../support/clock.ts";
import { harnessPerTest, settled } from "../support/engine-harness.ts";
import { waitFor } from "../support/wait.ts";

/**
 * Debounce and singleton (docs/architecture.md §19) on the real emulators: every enqueue of a burst
 * is answered with the job that runs for it, and the burst runs once. The clock is moved, not
 * waited on; SQS's own delays (a burst's first message, 2 s) are the only real waits.
 */
const Rev = z.object({
  doc: z.string().min(1).max(300),
  rev: z.number().int(),
  sleepMs: z.number().optional(),
});
const runs: { kind: string; id: string; payload: unknown; start: number; end?: number }[] = [];
const record = async (kind: string, id: string, payload: unknown, work?: () => Promise<void>) => {
  const run: (typeof runs)[number] = { kind, id, payload, start: performance.now() };
  runs.push(run);
  try {
    await work?.();
  } finally {
    run.end = performance.now();
  }
};
const debounced = (name: string, mode: "trailing" | "leading") =>
  defineUnboundKind({
    name,
    queue: "default",
    payload: Rev,
    maxAttempts: 3,
    timeoutSeconds: 30,
    debounce: { key: (p) => p.doc, periodSeconds: 2, maxDelaySeconds: 10, mode },
    handler: async (p, ctx) => {
      await record(name, ctx.job.id, p);
      return { doc: p.doc, rev: p.rev };
    },
  });
const singleton = (name: string, mode: "cancel-running" | "queue-one") =>
  defineUnboundKind({
    name,
    queue: "default",
    payload: Rev,
    maxAttempts: 3,
    timeoutSeconds: 30,
    singleton: { key: (p) => p.doc, mode },
    handler: async (p, ctx) => {
      await record(name, ctx.job.id, p, () => delay(p.sleepMs ?? 0, undefined, { signal: ctx.signal }));
      return { doc: p.doc, rev: p.rev };
    },
  });
const kinds = [
  debounced("t-trailing", "trailing"),
  debounced("t-leading", "leading"),
  collectKindDefinition({
    name: "t-collect",
    queue: "default",
    payload: Rev,
    maxAttempts: 3,
    timeoutSeconds: 30,
    debounce: { key: (p) => p.doc, periodSeconds: 2, maxDelaySeconds: 10 },
    handler: async (revisions, ctx) => {
      await record("t-collect", ctx.job.id, revisions);
      return revisions.map(() => ({ revs: revisions.map((r) => r.rev) }));
    },
  }),
  singleton("t-cancel", "cancel-running"),
  singleton("t-queue-one", "queue-one"),
  defineUnboundKind({
    name: "t-bad-key",
    queue: "default",
    payload: Rev,
    maxAttempts: 1,
    timeoutSeconds: 30,
    debounce: {
      key: (p) => (p.rev < 0 ? (undefined as unknown as string) : p.rev === 0 ? JSON.parse("{") : p.doc),
      periodSeconds: 2,
      mode: "trailing",
    },
    handler: async () => null,
  }),
];

const harness = harnessPerTest();
const runsOf = (id: string) => runs.filter((r) => r.id === id);

describe("debounce", () => {
  it("trailing: 20 enqueues of one doc run once, with the last payload; every answer names that job", async () => {
    const clock = new OffsetClock();
    const h = await harness.create({ clock, extraKinds: kinds });
    const answers = [];
    // The clock around each enqueue: the burst's run moves with the clock, whatever the machine's speed.
    const around: { before: number; after: number }[] = [];
    for (let rev = 1; rev <= 20; rev++) {
      const before = clock.now();
      answers.push(await h.engine.producer.enqueue({ kind: "t-trailing", payload: { doc: "d1", rev } }));
      around.push({ before, after: clock.now() });
      clock.advance(50);
    }
    const id = answers[0]?.job.id ?? "";
    expect(answers[0]).toMatchObject({ duplicate: false });
    expect(answers.every((a) => a.job.id === id)).toBe(true);
    expect(answers.slice(1).every((a) => a.debounced === true && a.duplicate === true)).toBe(true);
    // The burst runs a period after its last enqueue: it moved as far as the clock did between the
    // first enqueue and the last (19 × 50 ms, and the time the enqueues took).
    const last = answers[19]?.job;
    const moved = Date.parse(last?.runAt ?? "") - Date.parse(answers[0]?.job.runAt ?? "");
    const [first, twentieth] = [around[0], around[19]] as [(typeof around)[0], (typeof around)[0]];
    expect(moved).toBeGreaterThanOrEqual(Math.max(19 * 50, twentieth.before - first.after));
    expect(moved).toBeLessThanOrEqual(twentieth.after - first.before);
    expect(last?.enqueues).toBe(20);
    clock.advance(2100);
    h.startPoller();
    const done = await settled(h, id, "done");
    expect(JSON.parse(done.result ?? "null")).toEqual({ doc: "d1", rev: 20 });
    expect(runsOf(id)).toHaveLength(1);
    // A new burst after the run: a new job.
    const next = await h.engine.producer.enqueue({ kind: "t-trailing", payload: { doc: "d1", rev: 21 } });
    expect(next.duplicate).toBe(false);
    expect(next.job.id).not.toBe(id);
  });

  it("a burst longer than the max delay runs at the max delay, and a new burst starts after it", async () => {
    const clock = new HoldableClock();
    const h = await harness.create({ clock, extraKinds: kinds });
    const ids: string[] = [];
    // The enqueues 1.5 s apart exactly, however long each takes on a loaded machine.
    clock.hold();
    for (let rev = 1; rev <= 9; rev++) {
      ids.push((await h.engine.producer.enqueue({ kind: "t-trailing", payload: { doc: "d2", rev } })).job.id);
      clock.advance(1500);
    }
    clock.release();
    // 0 .. 8.5 s join the first burst, whose runAt stops at 10 s; at 12 s a new burst starts.
    expect(new Set(ids.slice(0, 7)).size).toBe(1);
    const first = await getJob(h.engine.store, ids[0] ?? "");
    expect(first?.runAt).toBe((first?.createdAt ?? 0) + 10_000);
    expect(ids[8]).not.toBe(ids[0]);
    h.startPoller();
    expect(JSON.parse((await settled(h, ids[0] ?? "", "done")).result ?? "")).toMatchObject({ rev: 7 });
  });

  it("the latest enqueue's start deadline counts from where the burst's run moved", async () => {
    const clock = new OffsetClock();
    const h = await harness.create({ clock, extraKinds: kinds });
    let last: EnqueueResult | undefined;
    for (let rev = 1; rev <= 5; rev++) {
      last = await h.engine.producer.enqueue({
        kind: "t-trailing",
        payload: { doc: "d7", rev },
        startWithinSeconds: 2,
      });
      clock.advance(500);
    }
    const id = last?.job.id ?? "";
    expect(Date.parse(last?.job.startBy ?? "")).toBe(Date.parse(last?.job.runAt ?? "") + 2000);
    // The burst's message comes 2 s (real) after its first enqueue, at about 4.5 s on this clock:
    // past the first enqueue's deadline (2 s + 2 s), inside the last one's (4 s + 2 s).
    h.startPoller();
    expect(JSON.parse((await settled(h, id, "done")).result ?? "")).toMatchObject({ rev: 5 });
  });

  it("leading: the first enqueue runs at once; the rest of the burst runs nothing and answers its id", async () => {
    const clock = new OffsetClock();
    const h = await harness.create({ clock, extraKinds: kinds });
    h.startPoller();
    const first = await h.engine.producer.enqueue({ kind: "t-leading", payload: { doc: "d3", rev: 1 } });
    await settled(h, first.job.id, "done");
    const more = [];
    for (let rev = 2; rev <= 5; rev++) {
      clock.advance(1000);
      more.push(await h.engine.producer.enqueue({ kind: "t-leading", payload: { doc: "d3", rev } }));
    }
    expect(more.every((a) => a.job.id === first.job.id && a.debounced)).toBe(true);
    clock.advance(2500);
    const after = await h.engine.producer.enqueue({ kind: "t-leading", payload: { doc: "d3", rev: 6 } });
    expect(after.duplicate).toBe(false);
    await settled(h, after.job.id, "done");
    expect(
      runs.filter((r) => r.kind === "t-leading" && (r.payload as { doc: string }).doc === "d3"),
    ).toHaveLength(2);
  });

  it("collect: one run gets every payload of the burst in enqueue order, one result each", async () => {
    const clock = new OffsetClock();
    const h = await harness.create({ clock, extraKinds: kinds });
    const answers = [];
    for (let rev = 1; rev <= 20; rev++)
      answers.push(await h.engine.producer.enqueue({ kind: "t-collect", payload: { doc: "d4", rev } }));
    const id = answers[0]?.job.id ?? "";
    expect(answers.every((a) => a.job.id === id)).toBe(true);
    clock.advance(2500);
    h.startPoller();
    const done = await settled(h, id, "done");
    const revs = Array.from({ length: 20 }, (_, i) => i + 1);
    expect(JSON.parse(done.result ?? "null")).toEqual(revs.map(() => ({ revs })));
    expect(runsOf(id)).toHaveLength(1);
  });

  it("a debounced or singleton kind can't be a group's child or completion job: 400, nothing written", async () => {
    const h = await harness.create({ clock: new OffsetClock(), extraKinds: kinds });
    const create = (child: string, completion: string) =>
      h.engine.groups
        .create({
          id: `flow-group-${child}-${completion}`,
          children: [{ kind: child, payload: { doc: "g", rev: 1 } }],
          onComplete: { kind: completion, payload: { doc: "g", rev: 1 } },
        })
        .then(
          () => undefined,
          (e: unknown) => e as ClientError,
        );
    const badChild = await create("t-trailing", "echo");
    expect(badChild).toBeInstanceOf(ClientError);
    expect(badChild?.issues).toContainEqual(expect.objectContaining({ path: "children.0.kind" }));
    const badCompletion = await create("echo", "t-cancel");
    expect(badCompletion?.message).toContain('kind "t-cancel" is a singleton kind');
    expect(h.metrics.total("enqueued")).toBe(0);
  });

  it("refuses a key that throws, isn't a string or is over 256 characters, and a delay: 400 naming the kind, nothing written", async () => {
    const h = await harness.create({ clock: new OffsetClock(), extraKinds: kinds });
    const cases: [string, unknown][] = [
      ["t-bad-key", { doc: "x", rev: 0 }],
      ["t-bad-key", { doc: "x", rev: -1 }],
      ["t-trailing", { doc: "x".repeat(257), rev: 1 }],
    ];
    for (const [kind, payload] of cases) {
      const err = await h.engine.producer.enqueue({ kind, payload }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ClientError);
      expect((err as ClientError).message).toContain(`kind "${kind}"`);
      expect((err as ClientError).issues?.[0]?.path).toBe("payload");
    }
    const delayed = await h.engine.producer
      .enqueue({ kind: "t-trailing", payload: { doc: "x", rev: 1 }, delaySeconds: 5 })
      .catch((e: unknown) => e);
    expect((delayed as ClientError).issues?.[0]?.path).toBe("delaySeconds");
    expect(h.metrics.total("enqueued")).toBe(0);
  });
});

describe("singleton", () => {
  it("cancel-running: a new enqueue cancels the running job, and runs once it has ended, never alongside", async () => {
    const clock = new OffsetClock();
    const h = await harness.create({ clock, extraKinds: kinds });
    h.startPoller();
    const first = await h.engine.producer.enqueue({
      kind: "t-cancel",
      payload: { doc: "d5", rev: 1, sleepMs: 10_000 },
    });
    await waitFor(async () => runsOf(first.job.id)[0], "the first sync to start");
    const second = await h.engine.producer.enqueue({ kind: "t-cancel", payload: { doc: "d5", rev: 2 } });
    expect(second.duplicate).toBe(false);
    expect(second.job.after).toEqual([first.job.id]);
    await settled(h, first.job.id, "cancelled");
    await settled(h, second.job.id, "done");
    const [a] = runsOf(first.job.id);
    const [b] = runsOf(second.job.id);
    expect(b?.start).toBeGreaterThanOrEqual(a?.end ?? Number.POSITIVE_INFINITY);
  });

  it("queue-one: one running and one waiting job per key; a newer enqueue replaces the waiting one's payload", async () => {
    const clock = new OffsetClock();
    const h = await harness.create({ clock, extraKinds: kinds });
    h.startPoller();
    const running = await h.engine.producer.enqueue({
      kind: "t-queue-one",
      payload: { doc: "d6", rev: 1, sleepMs: 3000 },
    });
    await waitFor(async () => runsOf(running.job.id)[0], "the first run to start");
    const waiting = await h.engine.producer.enqueue({ kind: "t-queue-one", payload: { doc: "d6", rev: 2 } });
    const replaced = await h.engine.producer.enqueue({ kind: "t-queue-one", payload: { doc: "d6", rev: 3 } });
    expect(waiting.job.id).not.toBe(running.job.id);
    expect(replaced).toMatchObject({ duplicate: true, debounced: true });
    expect(replaced.job.id).toBe(waiting.job.id);
    await settled(h, running.job.id, "done");
    const done = await settled(h, waiting.job.id, "done");
    expect(JSON.parse(done.result ?? "null")).toEqual({ doc: "d6", rev: 3 });
    const [a] = runsOf(running.job.id);
    const [b] = runsOf(waiting.job.id);
    expect(b?.start).toBeGreaterThanOrEqual(a?.end ?? Number.POSITIVE_INFINITY);
  });
});
