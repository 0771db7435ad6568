import { performance } from "node:perf_hooks";
import pLimit from "p-limit";
import { app } from "../app/index.ts";
import { NOOP_KIND, noopKind } from "../bench/noop-kind.ts";
import { RequestMeter } from "../bench/request-meter.ts";
import { WriteLedger } from "../bench/write-ledger.ts";
import { defineApp } from "../lib/declarations/define-app.ts";
import { silentLog } from "../lib/observability/log.ts";
import type { JobItem } from "../lib/store/job-item.ts";
import { getJob } from "../lib/store/read-ops.ts";
import { startLocalStack } from "../local/stack.ts";
import { ASSUMED_ENQUEUE_CALL_MS, BATCH, intEnv, payload, sleep } from "./bench-config.ts";
import { type Clients, engineBeside, mergeSnapshots } from "./bench-debounce.ts";
import { meteredUsage } from "./bench-usage.ts";

/**
 * The flood scenario (`npm run bench -- --scenario flood`; issue: flow control per key): tenant A
 * enqueues FLOOD_JOBS `tenant-echo` jobs (sleep 50 ms) in calls of 100, then five other tenants
 * OTHER_JOBS each, one call per tenant. Without flow control the others would wait behind A's whole
 * backlog; with it, A's jobs wait parked in A's line and the others' start within their own limits.
 * Before the flood, PLAIN_JOBS plain jobs of the no-op kind (fenced) measured the same way: the
 * requests a job costs without flow control, which the flood's are compared with.
 *
 * Enqueues go through a producer on clients of their own (metered apart, as the enqueue Lambda's
 * are on AWS); the bench reads the store on unmetered clients. No scheduled tick runs unless the
 * run stalls (AWS's reaper would come by once a minute): then one runs, and the report counts it.
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
const QUEUE = "default";
/** A's drain at 2 runs at once takes minutes (FLOOD_JOBS × 50 ms / 2 at the very least). */
const FLOOD_TIMEOUT_MS = intEnv("BENCH_FLOOD_TIMEOUT_MS", 1_800_000, 1000);
/** No job ended for this long: a tick runs, as the reaper would on AWS (every 60 s). */
const STALL_MS = 60_000;

interface Side {
  producer: ReturnType<typeof engineBeside>;
  reader: ReturnType<typeof engineBeside>;
  stack: Awaited<ReturnType<typeof startLocalStack>>;
  enqueueMeter: RequestMeter;
  workerMeter: RequestMeter;
  /** Writes by the item they land on (job, fkey: a key's places), both sides', status-index units estimated. */
  ledger: WriteLedger;
  ticks: number;
}

/** One enqueue call; every request must be answered with a new job. */
async function enqueueCall(side: Side, requests: readonly unknown[], ids: string[], callMs: number[]) {
  const t = performance.now();
  const results = await side.producer.producer.enqueueBatch(requests);
  callMs.push(performance.now() - t);
  for (const r of results) {
    if (!r.id || r.duplicate) throw new Error(`flood scenario: enqueue not a new job: ${JSON.stringify(r)}`);
    ids.push(r.id);
  }
}

const ended = (side: Side) => {
  const m = side.stack.metrics;
  return {
    succeeded: m.total("succeeded", QUEUE),
    failed: m.total("dead", QUEUE) + m.total("cancelled", QUEUE),
  };
};

/**
 * Bounded: until the stack's engine counted a success per job (in memory, cheap while thousands
 * wait), then until the store has every job done (read unmetered). `before`: the counts before
 * the first enqueue (jobs end while later calls go out). A dead or cancelled job, a stall past a
 * tick, or the timeout is the scenario's failure.
 */
async function waitDone(
  side: Side,
  ids: readonly string[],
  before: ReturnType<typeof ended>,
  timeoutMs: number,
): Promise<JobItem[]> {
  const deadline = performance.now() + timeoutMs;
  const limit = pLimit(16);
  let last = before.succeeded;
  let lastMove = performance.now();
  let ticksStalled = 0;
  for (;;) {
    const now = ended(side);
    if (now.failed > before.failed) throw new Error("flood scenario: a job ended dead or cancelled");
    if (now.succeeded !== last) [last, lastMove, ticksStalled] = [now.succeeded, performance.now(), 0];
    if (now.succeeded - before.succeeded >= ids.length) {
      const items = await Promise.all(ids.map((id) => limit(() => getJob(side.reader.store, id))));
      if (items.every((i) => i?.status === "done")) return items as JobItem[];
    }
    if (performance.now() > deadline)
      throw new Error(`flood scenario: timed out, ${now.succeeded - before.succeeded}/${ids.length} done`);
    if (performance.now() - lastMove > STALL_MS) {
      if (ticksStalled >= 2)
        throw new Error(`flood scenario: stalled at ${now.succeeded - before.succeeded}/${ids.length}`);
      await side.stack.ticker.tick();
      side.ticks += 1;
      ticksStalled += 1;
      lastMove = performance.now();
    }
    await sleep(200);
  }
}

/** The window's requests, priced as every scenario's are; `callMs` each enqueue call's wall time. */
function usageOf(side: Side, callMs: readonly number[], invocationsBefore: number) {
  const enqueue = side.enqueueMeter.snapshot();
  const whole = mergeSnapshots(enqueue, side.workerMeter.snapshot());
  const calls = { callMs, assumedMs: callMs.map(() => ASSUMED_ENQUEUE_CALL_MS) };
  const invocations = side.stack.eventSources.invocations(QUEUE) - invocationsBefore;
  return { whole: meteredUsage(whole, calls, invocations), snapshot: whole, ledger: side.ledger.snapshot() };
}

/** Plain no-op jobs (fenced), metered: what a job costs without flow control. */
async function plainWindow(side: Side, jobs: number, seqBase: number) {
  const invocationsBefore = side.stack.eventSources.invocations(QUEUE);
  side.enqueueMeter.reset();
  side.workerMeter.reset();
  side.ledger.reset();
  const before = ended(side);
  const ids: string[] = [];
  const callMs: number[] = [];
  for (let start = 0; start < jobs; start += BATCH) {
    const n = Math.min(BATCH, jobs - start);
    const requests = Array.from({ length: n }, (_, i) => ({
      kind: NOOP_KIND,
      payload: payload(seqBase + start + i, 256),
    }));
    await enqueueCall(side, requests, ids, callMs);
  }
  await waitDone(side, ids, before, FLOOD_TIMEOUT_MS);
  return { jobs: ids.length, ...usageOf(side, callMs, invocationsBefore) };
}

const tenantJob = (tenant: string, seq: number, sleepMs: number) => ({
  kind: TENANT_KIND,
  payload: { tenant, sleepMs, seq },
});

/** The flood: A's backlog, then each other tenant's one call; every job's item once all are done. */
async function floodWindow(
  side: Side,
  floodJobs: number,
  [a, ...others]: readonly string[],
  sleepMs: number,
) {
  const invocationsBefore = side.stack.eventSources.invocations(QUEUE);
  const metrics = side.stack.metrics;
  const parkedBefore = metrics.total("keyParked", QUEUE);
  const waitsBefore = metrics.total("keyWaits", QUEUE);
  side.enqueueMeter.reset();
  side.workerMeter.reset();
  side.ledger.reset();
  const before = ended(side);
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
  const workerMeter = new RequestMeter();
  const enqueueMeter = new RequestMeter();
  const ledger = new WriteLedger();
  // The app's kinds (tenant-echo among them) and the bench's no-op kind, the plain job.
  const benchApp = defineApp({ ...app, kinds: [...app.kinds, noopKind] });
  const stack = await startLocalStack({
    app: benchApp,
    port: 0,
    log: silentLog,
    autoTick: false,
    instrument: (clients) => {
      workerMeter.attachAll(clients);
      ledger.attach(clients.dynamodb);
    },
  });
  const clients: Clients[] = [];
  const side: Side = {
    stack,
    producer: engineBeside(stack, benchApp, clients, enqueueMeter, ledger),
    reader: engineBeside(stack, benchApp, clients),
    enqueueMeter,
    workerMeter,
    ledger,
    ticks: 0,
  };
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
    for (const c of clients) for (const client of Object.values(c)) client.destroy();
    await stack.stop();
  }
}

export type FloodRun = Awaited<ReturnType<typeof runFloodScenario>>;
