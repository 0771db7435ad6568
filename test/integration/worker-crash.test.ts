import type { SQSEvent } from "aws-lambda";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { systemClock } from "../../lib/clock.ts";
import { createWorker } from "../../lib/runtime/worker.ts";
import { type Harness, harnessPerTest, settled } from "../support/engine-harness.ts";
import {
  CRASH_LEASE_SECONDS,
  expectTakenOverOnce,
  TAKEOVER_BOUND_MS,
  takeoverMs,
} from "../support/takeover.ts";
import { kindOnDefaultQueue } from "../support/test-kinds.ts";
import { waitFor } from "../support/wait.ts";
import { type CrashSwitch, doomedEngine } from "./crash-switch.ts";

// A Lambda worker that dies with a batch in hand: before its claims, after a claim but before the
// first heartbeat, or with records still waiting for a slot. The queue keeps the production
// visibility timeout (a 900 s worker timeout + its window + 10 s = 911 s); the lease is 3 s.
// Another worker (the local event source, polling all along) must finish every job within 2 × the lease of the crash.

const harness = harnessPerTest();

/** The handler of every job here: it never finishes in the worker that will crash, and returns in any other. */
let crash: CrashSwitch | undefined;
let runs = 0;
const stalls = kindOnDefaultQueue(
  "stalls",
  { maxAttempts: 3, timeoutSeconds: 600, payload: z.object({ n: z.number() }) },
  async ({ n }) => {
    runs++;
    if (!crash?.tripped) await new Promise(() => {});
    return { n };
  },
);

/** A worker on its own clients, wired to the harness's table and queue, that `crash.trip()` kills. */
function doomedWorker(h: Harness, options: { afterAnswerTo?: string } = {}) {
  const doomed = doomedEngine(
    harness.emulators(),
    h.engine,
    { name: h.queue.name, url: h.urls.url },
    options,
  );
  crash = doomed.crash;
  const engine = doomed.engine;
  return createWorker(engine, { recordConcurrency: h.queue.recordConcurrency });
}

async function setUp(queue: { recordConcurrency?: number } = {}) {
  runs = 0;
  crash = undefined;
  return harness.create({
    clock: systemClock,
    queue: { leaseSeconds: CRASH_LEASE_SECONDS, ...queue },
    extraKinds: [stalls],
  });
}

/** A fresh harness with `count` jobs enqueued and all their messages received, as a worker's batch. */
async function batchInHand(
  count: number,
  queue: { recordConcurrency?: number } = {},
): Promise<{ h: Harness; ids: string[]; event: SQSEvent }> {
  const h = await setUp(queue);
  const ids: string[] = [];
  for (let n = 0; n < count; n++) {
    ids.push((await h.engine.producer.enqueue({ kind: "stalls", payload: { n } })).job.id);
  }
  const event = await h.receive(count, 2);
  expect(event.Records).toHaveLength(count);
  return { h, ids, event };
}

/** How long after the crash the surviving worker claimed the job. */

describe("a Lambda worker that dies with a batch in hand", () => {
  it("dies after its batch hold, before any claim: another worker runs the job within 2 × the lease", async ({
    annotate,
  }) => {
    const { h, ids, event } = await batchInHand(1);
    const id = ids[0] as string;
    void doomedWorker(h, { afterAnswerTo: "ChangeMessageVisibilityBatchCommand" })(event);
    const crashed = await waitFor(
      async () => (crash?.tripped ? crash : undefined),
      "the worker to crash after its hold",
    );
    h.startPoller();
    const done = await settled(h, id, "done");
    const after = takeoverMs(done, crashed.crashedAt);
    await annotate(`taken over ${after} ms after the crash (lease ${CRASH_LEASE_SECONDS} s)`);
    expect(done).toMatchObject({ attempts: 1, claimedFrom: "queued" });
    expect(after).toBeLessThanOrEqual(TAKEOVER_BOUND_MS);
    // Hidden by the hold for a lease, not handed straight back.
    expect(after).toBeGreaterThanOrEqual(CRASH_LEASE_SECONDS * 1000 - 1000);
    expect(runs).toBe(1);
  });

  it("dies after its claim, before the first heartbeat: the job is taken over within 2 × the lease", async ({
    annotate,
  }) => {
    const { h, ids, event } = await batchInHand(1);
    const id = ids[0] as string;
    void doomedWorker(h)(event);
    await settled(h, id, "running");
    await waitFor(async () => runs === 1, "the handler to start");
    crash?.trip();
    // What the name says: the only visibility change before the crash was the batch hold, no heartbeat.
    expect(crash?.sent("ChangeMessageVisibilityCommand")).toBe(0);
    const crashedAt = crash?.crashedAt ?? 0;
    h.startPoller();
    const done = await settled(h, id, "done");
    await expectTakenOverOnce(done, crashedAt, h.metrics, annotate);
  });

  it("keeps records that wait for a slot hidden past the first hold, and after a crash they all come back in time", async ({
    annotate,
  }) => {
    // One record at a time: the other two wait behind a handler that never finishes.
    const { h, ids, event } = await batchInHand(3, { recordConcurrency: 1 });
    void doomedWorker(h)(event);
    // The hold, then a hold of the waiting two every third of the lease: past the first hold's
    // lease + 1 s, a second consumer still finds nothing to receive.
    await waitFor(
      async () => (crash?.sent("ChangeMessageVisibilityBatchCommand") ?? 0) >= 6,
      "the waiting records to be held five more times",
    );
    expect((await h.receive(10, 0)).Records).toHaveLength(0);
    expect(runs).toBe(1);
    crash?.trip();
    const crashedAt = crash?.crashedAt ?? 0;
    h.startPoller();
    const done = await Promise.all(ids.map((id) => settled(h, id, "done")));
    const afters = done.map((d) => takeoverMs(d, crashedAt));
    await annotate(`taken over ${afters.join(", ")} ms after the crash (lease ${CRASH_LEASE_SECONDS} s)`);
    for (const after of afters) expect(after).toBeLessThanOrEqual(TAKEOVER_BOUND_MS);
    // The one that ran is revived; the two that waited were never claimed by the dead worker.
    expect(done.map((d) => d.attempts).sort()).toEqual([1, 1, 2]);
    expect(h.metrics.total("revived")).toBe(1);
    expect(h.metrics.total("succeeded")).toBe(3);
  }, 30_000);
});
