import { describe, expect, it } from "vitest";
import { waitFor } from "../support/wait.ts";
import {
  allAtOnce,
  assertHealthy,
  type FaultStack,
  faultScenarios,
  type Json,
  LAMBDA_KIND,
  LEASE_MS,
  POOL_CHILDREN,
  POOL_KIND,
  poolRestarted,
  report,
  times,
} from "./support.ts";

/**
 * Issue 12's fault-injection suite: real `npm start` processes in a copy of the project, observed
 * from outside by a kind and a pool child that log each run's start and end. Each scenario injects
 * one fault and asserts, for every job: none lost, none idle past 2 × lease after the fault, no two
 * runs at once, exactly one completion. Each prints its figures as one JSON line.
 */
const onStack = faultScenarios();
const lambdaJob = (ms: number, extra: Json = {}) => ({ kind: LAMBDA_KIND, payload: { ms }, ...extra });
const poolJob = (ms: number) => ({ kind: POOL_KIND, payload: { ms } });
const pidsOf = (lines: readonly { pid: number }[]) => [...new Set(lines.map((l) => l.pid))];

/** Every pool child busy with a 4 s job: the jobs' ids, and the pids of the children running them. */
async function busyPool(stack: FaultStack) {
  const ids = await stack.enqueueMany(times(POOL_CHILDREN, () => poolJob(4000)));
  const children = pidsOf(await stack.waitForStarts(ids, "every pool job to start", 30_000));
  return { ids, children };
}

describe("fault injection on npm start", () => {
  it("200 concurrent duplicate enqueues per uniqueKey make one job and one run per key", async () => {
    await onStack("duplicates", async (stack) => {
      const keys = times(5, (i) => `fault-dup-${i}`);
      const job = (key: string) => lambdaJob(300, { uniqueKey: key });
      const singles = keys.flatMap((key) => times(100, () => () => stack.call("POST", "/jobs", job(key))));
      const batches = times(100, () => () => stack.call("POST", "/jobs/batch", { jobs: keys.map(job) }));
      // Paused, no job finishes during the storm (a finished job's key would make a new one).
      expect((await stack.call("POST", "/queues/default/pause")).status).toBe(200);
      const sentAt = Date.now();
      const answers = await allAtOnce([...singles, ...batches]);
      const faultEndedAt = Date.now();
      expect((await stack.call("POST", "/queues/default/resume")).status).toBe(200);

      const byKey = new Map<string, { http: number; id?: string; duplicate?: boolean; error?: unknown }[]>(
        keys.map((k) => [k, []]),
      );
      answers.slice(0, singles.length).forEach((a, i) => {
        byKey.get(keys[Math.floor(i / 100)] as string)?.push({ ...a.body, http: a.status });
      });
      for (const a of answers.slice(singles.length)) {
        expect(a.status).toBe(200);
        for (const item of a.body.results as Json[])
          byKey.get(keys[item.index] as string)?.push({ ...item, http: a.status });
      }
      const ids: string[] = [];
      for (const [key, got] of byKey) {
        expect(got).toHaveLength(200);
        expect(
          got.filter((a) => (a.http !== 200 && a.http !== 201) || a.error !== undefined),
          key,
        ).toEqual([]);
        expect(new Set(got.map((a) => a.id)).size, key).toBe(1);
        expect(
          got.filter((a) => a.duplicate === false),
          key,
        ).toHaveLength(1);
        ids.push(got[0]?.id as string);
      }

      const figures = await assertHealthy(stack, ids, { leaseMs: LEASE_MS, faultEndedAt });
      expect(figures.runs).toBe(keys.length);
      report("duplicate-enqueues", { requests: answers.length, stormMs: faultEndedAt - sentAt, ...figures });
    });
  }, 60_000);

  it("cancelling 100 running jobs at once ends each once, with no run after it", async () => {
    await onStack("cancel-storm", async (stack) => {
      const ids = await stack.enqueueMany(times(100, () => lambdaJob(60_000)));
      await stack.waitForStarts(ids, "100 jobs to be running", 30_000);
      const sentAt = Date.now();
      const answers = await allAtOnce(ids.map((id) => () => stack.call("POST", `/jobs/${id}/cancel`)));
      const faultEndedAt = Date.now();
      expect(answers.filter((a) => a.status !== 200)).toEqual([]);

      const figures = await assertHealthy(stack, ids, {
        leaseMs: LEASE_MS,
        faultEndedAt,
        terminal: ["cancelled", "done"],
      });
      // None runs again: no message of theirs is left on the queue, and still one run each.
      const drainedAfterMs = await stack.untilQueueEmpty("default", 2 * LEASE_MS);
      expect(stack.observerLog().filter((l) => l.event === "start")).toHaveLength(ids.length);
      expect(figures.runs).toBe(ids.length);
      const ends = stack.observerLog().filter((l) => l.event === "end");
      expect(ends).toHaveLength(ids.length);
      expect(new Set(ends.map((l) => l.jobId)).size).toBe(ids.length);
      // A run learns of its cancel at its next renewal. On a starved machine a renewal can come back
      // after the run's own lease deadline (lease minus its margin): the run then stops as
      // lease_lost, writes nothing, and the takeover finds cancelRequested and ends the job cancelled
      // without running it (the single start per job above). Either way each run ends once.
      expect(
        ends.filter((l) => l.outcome !== "aborted:cancelled" && l.outcome !== "aborted:lease_lost"),
      ).toEqual([]);
      const stoppedAsLeaseLost = ends.filter((l) => l.outcome === "aborted:lease_lost").length;
      const stoppedWithinMs = Math.max(...ends.map((l) => l.at)) - sentAt;
      report("cancel-storm", {
        cancelsMs: faultEndedAt - sentAt,
        stoppedWithinMs,
        stoppedAsLeaseLost,
        drainedAfterMs,
        ...figures,
      });
    });
  }, 60_000);

  it("SIGKILLed pool children mid-job: each job runs again and completes once", async () => {
    await onStack("kill-children", async (stack) => {
      const { ids, children } = await busyPool(stack);
      await stack.killPids(children, "the observer children");
      const faultEndedAt = Date.now();

      const figures = await assertHealthy(stack, ids, { leaseMs: LEASE_MS, faultEndedAt });
      const reruns = stack.observerLog().filter((l) => l.event === "start" && !children.includes(l.pid));
      report("kill-children", {
        killed: children.length,
        rerunWithinMs: Math.max(...reruns.map((l) => l.at)) - faultEndedAt,
        ...figures,
      });
    });
  }, 60_000);

  it("a SIGKILLed pool is restarted; its jobs are taken over within 2 × lease and complete once", async () => {
    await onStack("kill-pool", async (stack) => {
      const { ids, children } = await busyPool(stack);
      const pool = stack.poolPid() as number;
      expect(pool).toBeGreaterThan(0);
      stack.deathWatch.watch(children);
      await stack.killPids([pool], "the pool process");
      const killedAt = stack.deaths.get(pool) as number;
      await waitFor(async () => children.every((pid) => stack.deaths.has(pid)), "children to die", 5_000, 10);
      const childrenGoneMs = Math.max(...children.map((pid) => stack.deaths.get(pid) as number)) - killedAt;
      expect(childrenGoneMs).toBeLessThanOrEqual(1000);
      const restarted = await poolRestarted(stack, pool);
      const faultEndedAt = Date.now();

      const figures = await assertHealthy(stack, ids, { leaseMs: LEASE_MS, faultEndedAt });
      report("kill-pool", {
        childrenGoneMs,
        poolBackAfterMs: faultEndedAt - killedAt,
        restartedPid: restarted,
        ...figures,
      });
    });
  }, 60_000);

  it("a stack frozen past the lease, then resumed, completes every job once with no overlap", async () => {
    await onStack("freeze", async (stack) => {
      const poolIds = await stack.enqueueMany(times(POOL_CHILDREN, () => poolJob(8000)));
      await stack.waitForStarts(poolIds, "the pool jobs to start", 30_000);
      const lambdaIds = await stack.enqueueMany(times(20, () => lambdaJob(8000)));
      await stack.waitForStarts(lambdaIds, "the Lambda-tier jobs to start", 20_000);
      const { frozenAt, thawedAt, processes } = await stack.freeze(LEASE_MS + 2000);

      const ids = [...poolIds, ...lambdaIds];
      const figures = await assertHealthy(stack, ids, { leaseMs: LEASE_MS, faultEndedAt: thawedAt });
      report("freeze", { processes, frozenMs: thawedAt - frozenAt, ...figures });
    });
  }, 60_000);

  it("a stack SIGKILLed with jobs queued and running, started again, completes every job once", async () => {
    await onStack("restart", async (stack) => {
      const poolIds = await stack.enqueueMany(times(4, () => poolJob(5000)));
      await stack.waitForStarts(poolIds, "the pool jobs to start", 30_000);
      const runningIds = await stack.enqueueMany(times(10, () => lambdaJob(5000)));
      const queuedIds = await stack.enqueueMany(times(10, () => lambdaJob(500, { delaySeconds: 5 })));
      await stack.waitForStarts(runningIds, "the Lambda-tier jobs to start", 20_000);
      const started = new Set(stack.observerLog().map((l) => l.jobId));
      expect(queuedIds.filter((id) => started.has(id))).toEqual([]);

      const { killedAt, processes } = await stack.killAll();
      await stack.restart();
      const faultEndedAt = Date.now();

      const ids = [...poolIds, ...runningIds, ...queuedIds];
      const figures = await assertHealthy(stack, ids, { leaseMs: LEASE_MS, faultEndedAt });
      // Each killed run's next attempt names why it ended and where it ran (docs/architecture.md §21).
      for (const id of [...poolIds, ...runningIds]) {
        const { history } = (await stack.call("GET", `/jobs/${id}`)).body;
        const lapsed = history.find((a: Json) => a.outcome === "lapsed");
        expect(lapsed?.error, id).toMatch(
          /^lease lapsed after \d+ s without an end \(the worker stopped: crash, out of memory or a frozen process\)$/,
        );
        expect(lapsed?.runner, id).toMatch(poolIds.includes(id) ? /^pool:.+\/\d+$/ : /^local:\d+$/);
        expect(history.at(-1)?.outcome, id).toBe("done");
      }
      report("restart", { processes, downMs: faultEndedAt - killedAt, ...figures });
    });
  }, 90_000);
});
