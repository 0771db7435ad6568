import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ChangeMessageVisibilityCommand, SendMessageCommand } from "@aws-sdk/client-sqs";
import { afterEach, describe, expect, test } from "vitest";
import type { JsonValue, PoolBatch } from "../../lib/declarations/pool-kind.ts";
import { cancelJob } from "../../lib/ops/cancel-job.ts";
import { sqsClient } from "../../local/emulators.ts";
import { ManualTimers } from "../support/manual-timers.ts";
import {
  gone,
  type PoolHarness,
  type PoolHarnessOptions,
  poolHarnessPerTest,
} from "../support/pool-harness.ts";
import { waitFor } from "../support/wait.ts";
import { doomedPool } from "./doomed-pool.ts";

/**
 * Issue 13 on the pool tier: batch kinds gathered per key across receives, each call one batch
 * request to one warm child (test/fixtures/children/scripted.mjs answers them; its first item's
 * payload.batchAct says how the call misbehaves), on fauxqs and dynalite with the real SDK clients.
 */

const pool = poolHarnessPerTest();
let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});
const scratch = (name: string) => {
  dir ??= mkdtempSync(join(tmpdir(), "pool-batch-"));
  return join(dir, name);
};

const keyOf = (payload: JsonValue) => String((payload as { key: string }).key);

async function setUp(
  batch: Partial<PoolBatch> = {},
  spec: PoolHarnessOptions["spec"] = {},
  { start = true } = {},
) {
  const timers = new ManualTimers();
  const h = await pool.create({
    spec: {
      soft: 1,
      hard: 1,
      batch: { key: keyOf, maxSize: 10, maxWaitSeconds: 2, policy: "duration", ...batch },
      ...spec,
    },
    timers,
    start,
  });
  return { h, timers };
}

/** What scripted.mjs answers for each item of a batch call. */
interface BatchResult {
  pid: number;
  attempt: number;
  echo: unknown;
  callId: string;
  callSize: number;
  key: string;
  index: number;
}
const batchResult = (h: PoolHarness, item: Parameters<PoolHarness["resultOf"]>[0]) =>
  h.resultOf(item) as unknown as BatchResult;

const enqueueAll = (h: PoolHarness, payloads: Record<string, unknown>[], maxAttempts?: number) =>
  Promise.all(payloads.map((p) => h.enqueue(p, maxAttempts ? { maxAttempts } : {})));

const gathered = (h: PoolHarness, n: number) =>
  waitFor(
    async () => h.runner.batchItemsWaiting() === n || undefined,
    `${n} items to wait in their keys' lines`,
  );

/** The calls a journal recorded (a call rerun on a fresh child counts again): key, size, child pid, times. */
function callsIn(journal: string) {
  const calls = new Map<string, { key: string; size: number; pid: number; start: number; end?: number }>();
  if (!existsSync(journal)) return [];
  for (const line of readFileSync(journal, "utf8").trim().split("\n")) {
    const [event, id, key, size, pid, at] = line.split(" ");
    const run = `${id} ${pid}`;
    if (event === "call-start")
      calls.set(run, {
        key: key as string,
        size: Number(size),
        pid: Number(pid),
        start: Number(at),
      });
    else if (event === "call-end") {
      const call = calls.get(run);
      if (call) call.end = Number(at);
    }
  }
  return [...calls.values()];
}

/** The most calls of one key that were in progress at the same moment. */
function peakOverlap(calls: { start: number; end?: number }[]): number {
  const edges = calls.flatMap((c) => [
    { at: c.start, d: 1 },
    { at: c.end ?? Number.POSITIVE_INFINITY, d: -1 },
  ]);
  edges.sort((a, b) => a.at - b.at || a.d - b.d);
  let now = 0;
  let peak = 0;
  for (const e of edges) {
    now += e.d;
    peak = Math.max(peak, now);
  }
  return peak;
}

describe("pool batch kinds: gathering per key across receives", () => {
  test("duration: a key's items from several receives wait maxWaitSeconds, then go in one call per key", async () => {
    const { h, timers } = await setUp();
    const firstA = await enqueueAll(
      h,
      [1, 2, 3].map((echo) => ({ key: "a", echo })),
    );
    await gathered(h, 3);
    const later = await enqueueAll(h, [
      { key: "a", echo: 4 },
      { key: "a", echo: 5 },
      { key: "b", echo: 6 },
      { key: "b", echo: 7 },
    ]);
    await gathered(h, 7);
    // Nothing is claimed before the wait has passed.
    expect(h.metrics.total("batchCalls")).toBe(0);
    expect((await h.job(firstA[0] as string)).status).toBe("queued");
    timers.advance(2000);
    const ids = [...firstA, ...later];
    const done = await Promise.all(ids.map((id) => h.settled(id, "done")));
    const results = done.map((d) => batchResult(h, d));
    const a = results.filter((r) => r.key === "a");
    const b = results.filter((r) => r.key === "b");
    expect(new Set(a.map((r) => r.callId)).size).toBe(1);
    expect(new Set(b.map((r) => r.callId)).size).toBe(1);
    expect(a.map((r) => r.callSize)).toEqual([5, 5, 5, 5, 5]);
    expect(b.map((r) => r.index).sort()).toEqual([0, 1]);
    expect(done.every((d) => d.attempts === 1)).toBe(true);
    expect(h.metrics.total("batchCalls")).toBe(2);
    expect(h.metrics.samples("batchItems").sort()).toEqual([2, 5]);
  });

  test("size: a call starts once maxSize items of the key wait, without the timer; the rest waits for it", async () => {
    const { h, timers } = await setUp({ maxSize: 3, policy: "size" });
    const full = await enqueueAll(
      h,
      [1, 2, 3].map((echo) => ({ key: "s", echo })),
    );
    const done = await Promise.all(full.map((id) => h.settled(id, "done")));
    expect(new Set(done.map((d) => batchResult(h, d).callId)).size).toBe(1);
    const [lone] = await enqueueAll(h, [{ key: "s", echo: 4 }]);
    await gathered(h, 1);
    timers.advance(2000);
    expect(batchResult(h, await h.settled(lone as string, "done")).callSize).toBe(1);
  });

  test("balanced: an idle key runs at once; what arrives while its call runs goes together when it ends", async () => {
    const { h } = await setUp({ policy: "balanced" });
    const journal = scratch("balanced");
    const [first] = await enqueueAll(h, [{ key: "k", batchAct: "sleep", ms: 2500, journal }]);
    await waitFor(async () => callsIn(journal).length === 1 || undefined, "the first call to start");
    const rest = await enqueueAll(
      h,
      [2, 3, 4].map((echo) => ({ key: "k", echo })),
    );
    await gathered(h, 3);
    expect(batchResult(h, await h.settled(first as string, "done")).callSize).toBe(1);
    const done = await Promise.all(rest.map((id) => h.settled(id, "done")));
    expect(done.map((d) => batchResult(h, d).callSize)).toEqual([3, 3, 3]);
  });

  test("the demo's Python child answers a batch request: each result names its call, its size and its place", async () => {
    const { h, timers } = await setUp({}, { argv: ["python3", "children/digest.py"] });
    const ids = await enqueueAll(
      h,
      [
        { key: "acct-1", text: "a" },
        { key: "acct-1", text: "b" },
        { key: "acct-1", fail: "bad row" },
      ],
      1,
    );
    await gathered(h, 3);
    timers.advance(2000);
    const [a, b] = await Promise.all(ids.slice(0, 2).map((id) => h.settled(id, "done")));
    const dead = await h.settled(ids[2] as string, "dead");
    const ra = h.resultOf(a as never) as unknown as Record<string, unknown>;
    const rb = h.resultOf(b as never) as unknown as Record<string, unknown>;
    expect(ra).toMatchObject({
      batchSize: 3,
      key: "acct-1",
      index: 0,
      runtime: expect.stringMatching(/^python/),
    });
    expect(rb).toMatchObject({ batchId: ra.batchId, index: 1 });
    expect(dead.lastError).toContain("bad row");
  });
});

describe("pool batch kinds: per-item outcomes and a child out of step", () => {
  test("one failing item fails alone; a throttled one waits; its siblings finish in the same call", async () => {
    const { h } = await setUp({ maxSize: 4, policy: "size" });
    const [ok1, bad, slow, ok2] = await enqueueAll(
      h,
      [
        { key: "o", echo: 1 },
        { key: "o", act: "error", message: "row 2 is bad" },
        { key: "o", act: "throttle", secs: 30 },
        { key: "o", echo: 4 },
      ],
      1,
    );
    const done = await Promise.all([ok1, ok2].map((id) => h.settled(id as string, "done")));
    expect(done.map((d) => batchResult(h, d).callSize)).toEqual([4, 4]);
    const dead = await h.settled(bad as string, "dead");
    expect(dead.lastError).toContain("row 2 is bad");
    // Throttled: back in the queue for its retry_after, the attempt not spent.
    const throttled = await h.settled(slow as string, "queued");
    expect(throttled.attempts).toBe(0);
    expect(h.metrics.total("batchCalls")).toBe(1);
  });

  test.each([
    ["missing", /no outcome for/],
    ["foreign", /items not asked/],
    ["wrong-call", /while call/],
  ])("a reply with %s item ids kills the child; every item of the call is retried", async (batchAct, why) => {
    const { h } = await setUp({ maxSize: 3, policy: "size" });
    const journal = scratch(`desync-${batchAct}`);
    // Every call misbehaves, so each item fails both its attempts as a desync.
    const ids = await enqueueAll(
      h,
      [1, 2, 3].map((echo) => ({ key: "d", echo, batchAct, journal })),
      2,
    );
    const dead = await Promise.all(ids.map((id) => h.settled(id, "dead")));
    for (const d of dead) {
      expect(d.attempts).toBe(2);
      expect(d.lastError).toMatch(/child out of sync/);
      expect(d.lastError).toMatch(why);
    }
    const calls = callsIn(journal);
    expect(calls[0]?.size).toBe(3);
    // A desynced child is never reused: each call ran on a child of its own.
    expect(new Set(calls.map((c) => c.pid)).size).toBe(calls.length);
    expect(h.metrics.total("childDesyncs")).toBe(calls.length);
  });

  test("a child that dies mid-call: the call runs again on a fresh child, each item completed once", async () => {
    const { h } = await setUp({ maxSize: 3, policy: "size" });
    const marker = scratch("crashed");
    const journal = scratch("crash-journal");
    const ids = await enqueueAll(
      h,
      [1, 2, 3].map((echo) => ({ key: "r", echo, batchAct: "crash-once", marker, journal })),
    );
    const done = await Promise.all(ids.map((id) => h.settled(id, "done")));
    expect(done.map((d) => d.attempts)).toEqual([1, 1, 1]);
    const pids = new Set(done.map((d) => batchResult(h, d).pid));
    expect(pids.size).toBe(1);
    expect(pids.has(Number(readFileSync(marker, "utf8")))).toBe(false);
    expect(callsIn(journal).map((c) => c.size)).toEqual([3, 3]);
    expect(h.metrics.total("succeeded")).toBe(3);
  });
});

describe("pool batch kinds: fences, cancels and concurrency", () => {
  test("a pool that dies mid-call: another pool takes each item over, exactly one completion each", async () => {
    // h's own runner never starts: the doomed pool gets the call.
    const { h } = await setUp({ maxSize: 3, policy: "size" }, {}, { start: false });
    const marker = scratch("hung");
    const ids = await enqueueAll(
      h,
      [1, 2, 3].map((echo) => ({ key: "z", echo, batchAct: "hang-once", marker })),
    );
    const doomed = doomedPool(pool.emulators(), h);
    await waitFor(async () => existsSync(marker) || undefined, "the doomed pool's call to reach its child");
    doomed.die();
    const survivor = h.anotherPool();
    const done = await Promise.all(ids.map((id) => h.settled(id, "done")));
    expect(done.map((d) => d.attempts)).toEqual([2, 2, 2]);
    expect(done.map((d) => d.claimedFrom)).toEqual(["running", "running", "running"]);
    expect(h.metrics.total("succeeded")).toBe(3);
    expect(h.metrics.total("revived")).toBe(3);
    expect(survivor.batchItemsWaiting()).toBe(0);
  }, 30_000);

  test("a duplicate delivery of an item in the same call is deferred, never run twice", async () => {
    const { h } = await setUp({ maxSize: 2, policy: "size" }, {}, { start: false });
    const [id] = await enqueueAll(h, [{ key: "dup" }]);
    // SQS delivers the job's message twice: a copy of its body is sent to the queue, and the
    // original is made visible again. The size policy waits for both: one call takes the two.
    const [message] = await h.receiveRaw(1, 1);
    const sqs = sqsClient(pool.emulators().sqs.endpoint);
    await sqs.send(new SendMessageCommand({ QueueUrl: h.urls.url, MessageBody: message?.Body }));
    await sqs.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: h.urls.url,
        ReceiptHandle: message?.ReceiptHandle,
        VisibilityTimeout: 0,
      }),
    );
    sqs.destroy();
    const runner = h.anotherPool();
    const done = await h.settled(id as string, "done");
    expect(batchResult(h, done).callSize).toBe(1);
    expect(done.attempts).toBe(1);
    await waitFor(
      async () => h.metrics.total("duplicateDeliveries") >= 1 || undefined,
      "the duplicate to be seen",
    );
    expect(h.metrics.total("succeeded")).toBe(1);
    expect(runner.batchItemsWaiting()).toBe(0);
  });

  test("a cancel before the call removes the item from it", async () => {
    const { h, timers } = await setUp();
    const [gone1, kept1, kept2] = await enqueueAll(
      h,
      [1, 2, 3].map((echo) => ({ key: "c", echo })),
    );
    await gathered(h, 3);
    expect((await cancelJob(h.engine, gone1 as string)).outcome).toBe("cancelled");
    timers.advance(2000);
    const done = await Promise.all([kept1, kept2].map((id) => h.settled(id as string, "done")));
    expect(done.map((d) => batchResult(h, d).callSize)).toEqual([2, 2]);
    expect((await h.job(gone1 as string)).status).toBe("cancelled");
  });

  test("a cancel during the call aborts that item alone; the child finishes the rest and lives on", async () => {
    const { h } = await setUp({ maxSize: 3, policy: "size" });
    const journal = scratch("cancel-during");
    const [a, b, c] = await enqueueAll(
      h,
      [1, 2, 3].map((echo) => ({ key: "m", echo, batchAct: "sleep", ms: 2500, journal })),
    );
    await waitFor(async () => callsIn(journal).length === 1 || undefined, "the call to start");
    expect((await cancelJob(h.engine, b as string)).outcome).toBe("requested");
    const done = await Promise.all([a, c].map((id) => h.settled(id as string, "done")));
    expect((await h.settled(b as string, "cancelled")).result).toBeUndefined();
    const [next] = await enqueueAll(
      h,
      [1, 2, 3].map((echo) => ({ key: "m", echo })),
    );
    const after = await h.settled(next as string, "done");
    expect(batchResult(h, after).pid).toBe(batchResult(h, done[0] as never).pid);
  });

  test("a cancel of every item of a running call kills its child at once", async () => {
    const { h } = await setUp({ maxSize: 2, policy: "size" });
    const journal = scratch("cancel-all");
    const ids = await enqueueAll(
      h,
      [1, 2].map((echo) => ({ key: "x", echo, batchAct: "hang", journal })),
    );
    await waitFor(async () => callsIn(journal).length === 1 || undefined, "the call to start");
    const pid = callsIn(journal)[0]?.pid as number;
    for (const id of ids) expect((await cancelJob(h.engine, id)).outcome).toBe("requested");
    await Promise.all(ids.map((id) => h.settled(id, "cancelled")));
    await gone(pid, "the hung call's child to be killed");
  });

  test("maxKeyConcurrency holds across four concurrent pools; every item runs once", async () => {
    const { h } = await setUp(
      { maxSize: 3, policy: "immediate", maxKeyConcurrency: 2 },
      { soft: 2, hard: 2 },
    );
    const journal = scratch("four-pools");
    for (let i = 0; i < 3; i++) h.anotherPool();
    const ids = await enqueueAll(h, [
      ...Array.from({ length: 12 }, (_, i) => ({ key: "p", echo: i, batchAct: "sleep", ms: 200, journal })),
      ...Array.from({ length: 12 }, (_, i) => ({ key: "q", echo: i, batchAct: "sleep", ms: 200, journal })),
    ]);
    const done = await Promise.all(ids.map((id) => h.settled(id, "done", 60_000)));
    expect(done.every((d) => d.attempts === 1)).toBe(true);
    const calls = callsIn(journal);
    for (const key of ["p", "q"])
      expect(peakOverlap(calls.filter((c) => c.key === key))).toBeLessThanOrEqual(2);
    expect(calls.reduce((n, c) => n + c.size, 0)).toBe(24);
    expect(h.metrics.total("succeeded")).toBe(24);
  }, 90_000);
});

describe("pool batch kinds: limits and shutdown", () => {
  test("maxPendingPerKey: a key with that many waiting refuses one more with key_backlog_full", async () => {
    const { h } = await setUp({ maxPendingPerKey: 2 }, {}, { start: false });
    await enqueueAll(h, [{ key: "full" }, { key: "full" }]);
    await expect(h.enqueue({ key: "full" })).rejects.toMatchObject({ code: "key_backlog_full" });
    await expect(h.enqueue({ key: "other" })).resolves.toEqual(expect.any(String));
  });

  test("shutdown gives back every gathered item at once, unclaimed, and hands back a call it can't finish", async () => {
    // One child, maxSize 5: the pool holds five items at most, two of them in the hung call.
    const { h, timers } = await setUp({ maxSize: 5 });
    const journal = scratch("shutdown");
    const running = await enqueueAll(
      h,
      [1, 2].map((echo) => ({ key: "run", echo, batchAct: "hang", journal })),
    );
    await gathered(h, 2);
    timers.advance(2000);
    await waitFor(async () => callsIn(journal).length === 1 || undefined, "the call to start");
    const waiting = await enqueueAll(h, [{ key: "w1" }, { key: "w2" }, { key: "w3" }]);
    await gathered(h, 3);
    const report = await h.stop(300);
    expect(report).toEqual({ finished: 0, handedBack: 2, returned: 3 });
    for (const id of waiting) expect((await h.job(id)).status).toBe("queued");
    for (const id of running) expect((await h.job(id)).status).toBe("queued");
    // Given back at once: another consumer receives all five now, not after a lease.
    const back = await h.receiveRaw(10, 1);
    expect(back).toHaveLength(5);
  });
});
