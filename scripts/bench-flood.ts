import { app } from "../app/index.ts";
import { NOOP_KIND, noopKind } from "../bench/noop-kind.ts";
import { defineApp } from "../lib/declarations/define-app.ts";
import { BATCH, intEnv, payload } from "./bench-config.ts";
import {
  enqueueCall,
  type JobsSide,
  jobsWindow,
  openJobsSide,
  openWindow,
  QUEUE,
  usageOf,
  waitDone,
} from "./bench-jobs.ts";

/**
 * The flood scenario (`npm run bench -- --scenario flood`; issue: flow control per key): tenant A
 * enqueues FLOOD_JOBS `tenant-echo` jobs (sleep 50 ms) in calls of 100, then five other tenants
 * OTHER_JOBS each, one call per tenant. Without flow control the others would wait behind A's whole
 * backlog; with it, A's jobs wait parked in A's line and the others' start within their own limits.
 * Before the flood, PLAIN_JOBS plain jobs of the no-op kind (fenced) measured the same way: the
 * requests a job costs without flow control, which the flood's are compared with.
 * Metered as every window of scripts/bench-jobs.ts is (a tick only when a window stalls, counted).
 */

/** BENCH_FLOOD_JOBS: A's backlog, whole calls of 100 (a smaller one for a quick look). */
export const FLOOD_JOBS = Math.max(1, Math.round(intEnv("BENCH_FLOOD_JOBS", 5000, 100) / BATCH)) * BATCH;
export const OTHER_JOBS = 50;
export const FLOOD_TENANT = "tenant-a";
/** One gold tenant among them, so the limit check sees both concurrencies (4 and 2). */
export const OTHER_TENANTS = ["tenant-b", "tenant-c", "tenant-d", "tenant-e", "gold-tenant-f"] as const;
export const SLEEP_MS = 50;
export const PLAIN_JOBS = 500;
const TENANT_KIND = "tenant-echo";
/** A's drain at 2 runs at once takes minutes (FLOOD_JOBS × 50 ms / 2 at the very least). */
const FLOOD_TIMEOUT_MS = intEnv("BENCH_FLOOD_TIMEOUT_MS", 1_800_000, 1000);

/** Plain no-op jobs (fenced), metered: what a job costs without flow control. */
const plainWindow = (side: JobsSide, jobs: number, seqBase: number) =>
  jobsWindow(side, jobs, (i) => ({ kind: NOOP_KIND, payload: payload(seqBase + i, 256) }), FLOOD_TIMEOUT_MS);

const tenantJob = (tenant: string, seq: number, sleepMs: number) => ({
  kind: TENANT_KIND,
  payload: { tenant, sleepMs, seq },
});

/** The flood: A's backlog, then each other tenant's one call; every job's item once all are done. */
async function floodWindow(
  side: JobsSide,
  floodJobs: number,
  [a, ...others]: readonly string[],
  sleepMs: number,
) {
  const metrics = side.stack.metrics;
  const parkedBefore = metrics.total("keyParked", QUEUE);
  const waitsBefore = metrics.total("keyWaits", QUEUE);
  const { invocationsBefore, before } = openWindow(side);
  const ids: string[] = [];
  const callMs: number[] = [];
  const firstEnqueueAt = Date.now();
  for (let start = 0; start < floodJobs; start += BATCH) {
    const n = Math.min(BATCH, floodJobs - start);
    const requests = Array.from({ length: n }, (_, i) => tenantJob(a as string, start + i, sleepMs));
    await enqueueCall(side, requests, ids, callMs);
  }
  const floodEnqueuedAt = Date.now();
  for (const tenant of others)
    await enqueueCall(
      side,
      Array.from({ length: OTHER_JOBS }, (_, i) => tenantJob(tenant, i, sleepMs)),
      ids,
      callMs,
    );
  const items = await waitDone(side, ids, before, FLOOD_TIMEOUT_MS);
  const doneAt = Date.now();
  return {
    jobs: ids.length,
    items,
    firstEnqueueAt,
    floodEnqueueMs: floodEnqueuedAt - firstEnqueueAt,
    windowMs: doneAt - firstEnqueueAt,
    parked: metrics.total("keyParked", QUEUE) - parkedBefore,
    keyWaits: metrics.total("keyWaits", QUEUE) - waitsBefore,
    ...usageOf(side, callMs, invocationsBefore),
  };
}

export async function runFloodScenario() {
  // The app's kinds (tenant-echo among them) and the bench's no-op kind, the plain job.
  const side = await openJobsSide("flood", defineApp({ ...app, kinds: [...app.kinds, noopKind] }));
  try {
    // Warm-ups, unreported: the first requests of each code path, parking and hand-over included.
    await plainWindow(side, BATCH, 8_000_000);
    await floodWindow(side, BATCH, ["warm-a", "warm-b"], 0);
    const plain = await plainWindow(side, PLAIN_JOBS, 9_000_000);
    side.ticks = 0;
    const flood = await floodWindow(side, FLOOD_JOBS, [FLOOD_TENANT, ...OTHER_TENANTS], SLEEP_MS);
    return {
      floodJobs: FLOOD_JOBS,
      otherJobs: OTHER_JOBS,
      sleepMs: SLEEP_MS,
      ticks: side.ticks,
      plain,
      flood,
    };
  } finally {
    await side.stop();
  }
}

export type FloodRun = Awaited<ReturnType<typeof runFloodScenario>>;
