import { performance } from "node:perf_hooks";
import pLimit from "p-limit";
import { type MeterSnapshot, RequestMeter } from "../bench/request-meter.ts";
import { type LedgerSnapshot, sumClasses, WriteLedger } from "../bench/write-ledger.ts";
import type { App } from "../lib/declarations/define-app.ts";
import { silentLog } from "../lib/observability/log.ts";
import type { JobItem } from "../lib/store/job-item.ts";
import { getJob } from "../lib/store/read-ops.ts";
import { startLocalStack } from "../local/stack.ts";
import { ASSUMED_ENQUEUE_CALL_MS, BATCH, sleep } from "./bench-config.ts";
import { type Clients, engineBeside, mergeSnapshots } from "./bench-debounce.ts";
import { costPerUnit, type MeteredUsage, meteredUsage } from "./bench-usage.ts";

/**
 * Metered windows of jobs on a local stack of the scenario's own (the flood and durable scenarios of
 * `npm run bench`): enqueues through a producer on clients of their own (metered apart, as the
 * enqueue Lambda's are on AWS), runs on the stack's metered clients, the bench's reads of the store
 * on unmetered ones; writes by the item they land on (both sides'). No scheduled tick runs unless a
 * window stalls (AWS's reaper would come by once a minute): then one runs, and `ticks` counts it.
 */

/** Every scenario here runs on the app's `default` queue. */
export const QUEUE = "default";
/** No job ended for this long: a tick runs, as the reaper would on AWS (every 60 s). */
const STALL_MS = 60_000;

export interface JobsSide {
  /** Names the scenario in its errors ("flood scenario: …"). */
  scenario: string;
  producer: ReturnType<typeof engineBeside>;
  reader: ReturnType<typeof engineBeside>;
  stack: Awaited<ReturnType<typeof startLocalStack>>;
  enqueueMeter: RequestMeter;
  workerMeter: RequestMeter;
  /** Writes by the item they land on (job, fkey: a key's places…), both sides', status-index units estimated. */
  ledger: WriteLedger;
  ticks: number;
  /** Destroys the side's own clients and stops the stack. */
  stop(): Promise<void>;
}

/** A local stack of `app` with no scheduled tick, metered as above. */
export async function openJobsSide(scenario: string, app: App): Promise<JobsSide> {
  const workerMeter = new RequestMeter();
  const enqueueMeter = new RequestMeter();
  const ledger = new WriteLedger();
  const stack = await startLocalStack({
    app,
    port: 0,
    log: silentLog,
    autoTick: false,
    instrument: (clients) => {
      workerMeter.attachAll(clients);
      ledger.attach(clients.dynamodb);
    },
  });
  const clients: Clients[] = [];
  return {
    scenario,
    stack,
    producer: engineBeside(stack, app, clients, enqueueMeter, ledger),
    reader: engineBeside(stack, app, clients),
    enqueueMeter,
    workerMeter,
    ledger,
    ticks: 0,
    stop: async () => {
      for (const c of clients) for (const client of Object.values(c)) client.destroy();
      await stack.stop();
    },
  };
}

/** One enqueue call; every request must be answered with a new job. */
export async function enqueueCall(
  side: JobsSide,
  requests: readonly unknown[],
  ids: string[],
  callMs: number[],
) {
  const t = performance.now();
  const results = await side.producer.producer.enqueueBatch(requests);
  callMs.push(performance.now() - t);
  for (const r of results) {
    if (!r.id || r.duplicate)
      throw new Error(`${side.scenario} scenario: enqueue not a new job: ${JSON.stringify(r)}`);
    ids.push(r.id);
  }
}

/** Jobs the stack's engine counted ended on the queue (in memory: cheap while thousands wait). */
export const endedCounts = (side: JobsSide) => {
  const m = side.stack.metrics;
  return {
    succeeded: m.total("succeeded", QUEUE),
    failed: m.total("dead", QUEUE) + m.total("cancelled", QUEUE),
  };
};

/**
 * Bounded: until the stack's engine counted a success per job, then until the store has every job
 * done (read unmetered). `before`: the counts before the first enqueue (jobs end while later calls
 * go out). A dead or cancelled job, a stall past two ticks, or the timeout is the scenario's failure.
 */
export async function waitDone(
  side: JobsSide,
  ids: readonly string[],
  before: ReturnType<typeof endedCounts>,
  timeoutMs: number,
): Promise<JobItem[]> {
  const deadline = performance.now() + timeoutMs;
  const limit = pLimit(16);
  const fail = (what: string) => new Error(`${side.scenario} scenario: ${what}`);
  let last = before.succeeded;
  let lastMove = performance.now();
  let ticksStalled = 0;
  for (;;) {
    const now = endedCounts(side);
    if (now.failed > before.failed) throw fail("a job ended dead or cancelled");
    if (now.succeeded !== last) [last, lastMove, ticksStalled] = [now.succeeded, performance.now(), 0];
    if (now.succeeded - before.succeeded >= ids.length) {
      const items = await Promise.all(ids.map((id) => limit(() => getJob(side.reader.store, id))));
      if (items.every((i) => i?.status === "done")) return items as JobItem[];
    }
    if (performance.now() > deadline)
      throw fail(`timed out, ${now.succeeded - before.succeeded}/${ids.length} done`);
    if (performance.now() - lastMove > STALL_MS) {
      if (ticksStalled >= 2) throw fail(`stalled at ${now.succeeded - before.succeeded}/${ids.length}`);
      await side.stack.ticker.tick();
      side.ticks += 1;
      ticksStalled += 1;
      lastMove = performance.now();
    }
    await sleep(200);
  }
}

/** The meters and the ledger start a new window; the invocations and counts to measure it from. */
export function openWindow(side: JobsSide) {
  side.enqueueMeter.reset();
  side.workerMeter.reset();
  side.ledger.reset();
  return { invocationsBefore: side.stack.eventSources.invocations(QUEUE), before: endedCounts(side) };
}

/** The window's requests, priced as every scenario's are; `callMs` each enqueue call's wall time. */
export function usageOf(side: JobsSide, callMs: readonly number[], invocationsBefore: number) {
  const enqueue = side.enqueueMeter.snapshot();
  const whole = mergeSnapshots(enqueue, side.workerMeter.snapshot());
  const calls = { callMs, assumedMs: callMs.map(() => ASSUMED_ENQUEUE_CALL_MS) };
  const invocations = side.stack.eventSources.invocations(QUEUE) - invocationsBefore;
  return { whole: meteredUsage(whole, calls, invocations), snapshot: whole, ledger: side.ledger.snapshot() };
}

export type WindowUsage = ReturnType<typeof usageOf>;

/**
 * `jobs` jobs made by `request(i)`, enqueued in calls of 100 and run to done, metered as one window:
 * the job count, the items (done) and the window's usage.
 */
export async function jobsWindow(
  side: JobsSide,
  jobs: number,
  request: (i: number) => unknown,
  timeoutMs: number,
) {
  const { invocationsBefore, before } = openWindow(side);
  const ids: string[] = [];
  const callMs: number[] = [];
  for (let start = 0; start < jobs; start += BATCH) {
    const n = Math.min(BATCH, jobs - start);
    await enqueueCall(
      side,
      Array.from({ length: n }, (_, i) => request(start + i)),
      ids,
      callMs,
    );
  }
  const items = await waitDone(side, ids, before, timeoutMs);
  return { jobs: ids.length, items, ...usageOf(side, callMs, invocationsBefore) };
}

export type JobsWindow = Awaited<ReturnType<typeof jobsWindow>>;

const sentMessages = (s: MeterSnapshot) =>
  (s.operations["sqs:SendMessage"]?.messages ?? 0) + (s.operations["sqs:SendMessageBatch"]?.messages ?? 0);
const receivedMessages = (s: MeterSnapshot) => s.operations["sqs:ReceiveMessage"]?.messages ?? 0;

/** A window's requests, all told (the enqueue's and the runs'), divided by `n`. */
export function perJob(
  w: { whole: MeteredUsage; snapshot: MeterSnapshot; ledger: LedgerSnapshot },
  n: number,
) {
  const cls = (name: string) => sumClasses(w.ledger, (c) => c === name);
  return {
    jobItemWrites: cls("job").requests / n,
    jobItemWcu: cls("job").writeUnits / n,
    keyStateWrites: cls("fkey").requests / n,
    lostConditions: sumClasses(w.ledger, () => true).errors / n,
    indexWcu: sumClasses(w.ledger, () => true).indexWriteUnits / n,
    writes: w.whole.ddbWrite.requests / n,
    reads: w.whole.ddbRead.requests / n,
    wcu: w.whole.wcu / n,
    rcu: w.whole.rcu / n,
    sends: sentMessages(w.snapshot) / n,
    receives: receivedMessages(w.snapshot) / n,
    sqsBilled: w.whole.sqsBilled / n,
    /** Lease renewals: each heartbeat writes the job item and sends one ChangeMessageVisibility. */
    renewals: (w.snapshot.operations["sqs:ChangeMessageVisibility"]?.requests ?? 0) / n,
    lambdaInvocations: (w.whole.workerInvocations + w.whole.enqueueInvocations) / n,
    usdPerMillion: costPerUnit(w.whole, n).cost.usdPerMillionJobs,
  };
}
