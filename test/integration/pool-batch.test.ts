import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SendMessageCommand } from "@aws-sdk/client-sqs";
import { afterEach, describe, expect, test } from "vitest";
import type { JsonValue, PoolBatch } from "../../lib/app/pool-kind.ts";
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

async function setUp(batch: Partial<PoolBatch> = {}, spec: PoolHarnessOptions["spec"] = {}) {
  const timers = new ManualTimers();
  const h = await pool.create({
    spec: {
      soft: 1,
      hard: 1,
      batch: { key: keyOf, maxSize: 10, maxWaitSeconds: 2, policy: "duration", ...batch },
      ...spec,
    },
    timers,
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

/** The calls a journal recorded: key, size, child pid, start and end times. */
function callsIn(journal: string) {
  const calls = new Map<string, { key: string; size: number; pid: number; start: number; end?: number }>();
  if (!existsSync(journal)) return [];
  for (const line of readFileSync(journal, "utf8").trim().split("\n")) {
    const [event, id, key, size, pid, at] = line.split(" ");
    if (event === "call-start")
      calls.set(id as string, {
        key: key as string,
        size: Number(size),
        pid: Number(pid),
        start: Number(at),
      });
    else if (event === "call-end") {
      const call = calls.get(id as string);
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
