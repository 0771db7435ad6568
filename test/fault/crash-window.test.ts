import { describe, expect, it } from "vitest";
import { waitFor } from "../support/wait.ts";
import {
  assertHealthy,
  BATCH_KIND,
  BATCH_LEASE_MS,
  type FaultStack,
  faultScenarios,
  type Json,
  LAMBDA_KIND,
  LEASE_MS,
  report,
  times,
} from "./support.ts";

/**
 * Issue 24: a whole-stack SIGKILL between the local event source's receive and the worker's hold
 * (a batch still gathering, records not yet started, a group's children in flight). After the
 * restart every job ends once and none waits past 2 × lease: the receive hid each message for the
 * batching window plus one hold, not the queue's visibility timeout.
 */
const onStack = faultScenarios();
const lambdaJob = (ms: number) => ({ kind: LAMBDA_KIND, payload: { ms } });
const batchJob = (key: string, ms: number) => ({ kind: BATCH_KIND, payload: { key, ms } });

/** The queue's live counts, as GET /queues shows them. */
async function counts(stack: FaultStack, queue: string): Promise<Json> {
  const r = await stack.call("GET", "/queues");
  return (r.body.items as Json[]).find((q) => q.name === queue)?.counts ?? {};
}

/** Kills the whole stack and starts it again on the same data; when it was back. */
async function killAndRestart(stack: FaultStack) {
  const { killedAt, deadAt, processes } = await stack.killAll();
  await stack.restart();
  const faultEndedAt = Date.now();
  return { faultEndedAt, killedAt, deadAt, processes, downMs: faultEndedAt - killedAt };
}

describe("a whole-stack kill between receive and hold", () => {
  it("inside a batch queue's gathering window: every item runs once, within 2 × lease of the restart", async () => {
    await onStack("gathering", async (stack) => {
      const ids = await stack.enqueueMany(times(10, () => batchJob("k", 100)));
      // Received by the event source (in flight), not yet run by any worker.
      await waitFor(async () => (await counts(stack, "batch")).inFlight === 10, "the batch to be received");
      expect(stack.observerLog().filter((l) => ids.includes(l.jobId))).toEqual([]);
      const kill = await killAndRestart(stack);
      const figures = await assertHealthy(stack, ids, {
        leaseMs: BATCH_LEASE_MS,
        faultEndedAt: kill.faultEndedAt,
        killLandedBy: kill.deadAt,
      });
      report("gathering", { ...kill, ...figures });
    });
  }, 90_000);

  it("under load on default and on batch: every job runs once, within 2 × lease of the restart", async () => {
    await onStack("load", async (stack) => {
      // No run may end near the kill: a run that ended just before it, its finalize not yet
      // written, would run again (at least once), which is not what this tests. So the batch queue
      // (whose first calls wait out its gathering window) starts first, the default queue's jobs go
      // in only then, and the kill comes as soon as both have runs going: every run so far began
      // well inside its length. The default queue's runs (700 ms) end before their first renewal
      // (a third of the 3 s lease): under this load one dynalite's latency spiked past a renewal's
      // margin (1.25 s) and CI saw 30 taken-over runs lose their leases together (correctly,
      // nothing ran twice) and wait out their messages again, which measures the emulator's
      // overload, not the window between receive and hold that this scenario is about.
      const started = (ids: readonly string[]) => {
        const seen = new Set(stack.observerLog().map((l) => l.jobId));
        return ids.some((id) => seen.has(id)) || undefined;
      };
      const batchIds = await stack.enqueueMany(times(200, (i) => batchJob(`k${i % 20}`, 2000)));
      await waitFor(async () => started(batchIds), "runs on the batch queue", 30_000);
      const defaultIds = await stack.enqueueMany(times(50, () => lambdaJob(700)));
      await waitFor(async () => started(defaultIds), "runs on the default queue", 30_000);
      const kill = await killAndRestart(stack);
      const [onDefault, onBatch] = await Promise.all([
        assertHealthy(stack, defaultIds, {
          leaseMs: LEASE_MS,
          faultEndedAt: kill.faultEndedAt,
          killLandedBy: kill.deadAt,
          timeoutMs: 60_000,
        }),
        assertHealthy(stack, batchIds, {
          leaseMs: BATCH_LEASE_MS,
          faultEndedAt: kill.faultEndedAt,
          killLandedBy: kill.deadAt,
          timeoutMs: 60_000,
        }),
      ]);
      report("load", { ...kill, default: onDefault, batch: onBatch });
    });
  }, 150_000);

  it("a group whose children are in flight: each child runs once and the group completes", async () => {
    await onStack("group", async (stack) => {
      const created = await stack.call("POST", "/groups", {
        id: "crash-window",
        // Fewer than the queue runs at once (10 invocations × 10 records), so each is running or
        // received at the kill; long enough that none ends near it.
        children: times(50, () => lambdaJob(2000)),
        onComplete: lambdaJob(0),
      });
      expect(created.status).toBe(201);
      const childIds: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await stack.call(
          "GET",
          `/groups/crash-window/children?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
        );
        childIds.push(...(page.body.items as Json[]).map((c) => c.id as string));
        cursor = page.body.cursor;
      } while (cursor);
      expect(childIds).toHaveLength(50);
      await stack.waitForStarts(childIds.slice(0, 1), "a child to start", 30_000);
      const kill = await killAndRestart(stack);
      const figures = await assertHealthy(stack, childIds, {
        leaseMs: LEASE_MS,
        faultEndedAt: kill.faultEndedAt,
        killLandedBy: kill.deadAt,
        timeoutMs: 60_000,
      });
      const group = await waitFor(
        async () => {
          const r = await stack.call("GET", "/groups/crash-window");
          return r.body.status === "succeeded" && r.body;
        },
        "the group to succeed",
        30_000,
      );
      expect(group.counts).toMatchObject({ total: 50, done: 50, pending: 0 });
      // The completion job exists once the last child ended: it is measured from then.
      const completion = await assertHealthy(stack, [group.completionJobId], {
        leaseMs: LEASE_MS,
        faultEndedAt: kill.faultEndedAt + figures.settledAfterFaultMs,
      });
      report("group", { ...kill, ...figures, completion: completion.statuses });
    });
  }, 150_000);
});
