import { performance } from "node:perf_hooks";
import pLimit from "p-limit";
import { BENCH_BATCH_KIND, BENCH_BATCH_QUEUE, BENCH_BATCH_SIZE, batchBenchApp } from "../bench/batch-kind.ts";
import { RequestMeter } from "../bench/request-meter.ts";
import { silentLog } from "../lib/observability/log.ts";
import { getJob } from "../lib/store/read-ops.ts";
import { type LocalStack, startLocalStack } from "../local/stack.ts";
import { ASSUMED_ENQUEUE_CALL_MS, intEnv, payload, round, sleep, TIMEOUT_MS } from "./bench-config.ts";
import { enqueueTimed, holdEventSource } from "./bench-enqueue.ts";
import { costPerUnit, meteredUsage } from "./bench-usage.ts";

/**
 * The batch scenario of `npm run bench` (docs/architecture.md §18): a backlog of BENCH_BATCH_JOBS
 * jobs of one no-op batch kind (maxSize 100), all of one key, enqueued while its event source is off,
 * then drained at once. Handler calls per job, $/M jobs and items/s, metered like the single-kind window.
 */
export const BATCH_JOBS = intEnv("BENCH_BATCH_JOBS", 2000, 100);
const KEYS = 1;

const backlog = (jobs: number, seqBase: number) =>
  Array.from({ length: jobs }, (_, i) => {
    const seq = seqBase + i;
    return { kind: BENCH_BATCH_KIND, payload: { ...payload(seq, 256), key: `key-${seq % KEYS}` } };
  });

/** The event source held, the backlog goes in; on again, it hands the worker 100 records at a time. */
async function drainBacklog(stack: LocalStack, jobs: number, seqBase: number, succeededBefore: number) {
  const source = await holdEventSource(stack, BENCH_BATCH_QUEUE, 2);
  const enqueued = await enqueueTimed(
    stack,
    backlog(jobs, seqBase),
    (error) => new Error(`batch scenario: enqueue refused: ${JSON.stringify(error)}`),
  );
  const resumedAt = Date.now();
  await source.resume();
  const deadline = performance.now() + TIMEOUT_MS;
  while (stack.metrics.total("succeeded") < succeededBefore + jobs) {
    if (performance.now() > deadline)
      throw new Error(
        `batch scenario: timed out, ${stack.metrics.total("succeeded") - succeededBefore}/${jobs} done`,
      );
    if (stack.metrics.total("dead") > 0) throw new Error("batch scenario: a job ended dead");
    await sleep(5);
  }
  return { ...enqueued, resumedAt };
}

export async function runBatchScenario() {
  const meter = new RequestMeter();
  const stack = await startLocalStack({
    app: batchBenchApp(),
    port: 0,
    log: silentLog,
    autoTick: false,
    instrument: (clients) => meter.attachAll(clients),
  });
  try {
    await drainBacklog(stack, BENCH_BATCH_SIZE, 9_000_000, 0);
    meter.reset();
    const callsBefore = stack.metrics.total("batchCalls");
    const invocationsBefore = stack.eventSources.invocations(BENCH_BATCH_QUEUE);
    const { ids, callMs, resumedAt } = await drainBacklog(stack, BATCH_JOBS, 0, BENCH_BATCH_SIZE);
    const snap = meter.snapshot();
    const calls = stack.metrics.total("batchCalls") - callsBefore;
    const limit = pLimit(16);
    const items = await Promise.all(ids.map((id) => limit(() => getJob(stack.engine.store, id))));
    const lastDone = Math.max(...items.map((i) => i?.finishedAt ?? 0));
    // A delivery of 100 records takes ten receives: the invocations are the event source's own count.
    const invocations = stack.eventSources.invocations(BENCH_BATCH_QUEUE) - invocationsBefore;
    const m = meteredUsage(
      snap,
      { callMs, assumedMs: callMs.map(() => ASSUMED_ENQUEUE_CALL_MS) },
      invocations,
    );
    const priced = costPerUnit(m, BATCH_JOBS);
    return {
      jobs: BATCH_JOBS,
      maxSize: BENCH_BATCH_SIZE,
      keys: KEYS,
      handlerCalls: calls,
      callsPerJob: calls / BATCH_JOBS,
      itemsPerSecond: BATCH_JOBS / ((lastDone - resumedAt) / 1000),
      wcuPerJob: m.wcu / BATCH_JOBS,
      sqsPerJob: m.sqsBilled / BATCH_JOBS,
      lambdaPerJob: (m.workerInvocations + m.enqueueInvocations) / BATCH_JOBS,
      usdPerMillionJobs: priced.cost.usdPerMillionJobs,
      usdPerMillionJobsMeasured: priced.variants.measured.asCounted.usdPerMillionJobs,
    };
  } finally {
    await stack.stop();
  }
}

export type BatchRun = Awaited<ReturnType<typeof runBatchScenario>>;

export const batchJson = (b: BatchRun) => ({
  jobs: b.jobs,
  maxSize: b.maxSize,
  handlerCallsPerJob: round(b.callsPerJob, 4),
  itemsPerSecond: round(b.itemsPerSecond, 1),
  wcuPerJob: round(b.wcuPerJob, 4),
  usdPerMillionJobs: round(b.usdPerMillionJobs, 4),
});

/** `singleUsd`: the single window's $/M jobs when it ran beside the batch (`--scenario all`). */
export function printBatchTable(b: BatchRun, singleUsd?: number): void {
  const rows: [string, string][] = [
    [
      "jobs",
      `${b.jobs} of ${BENCH_BATCH_KIND} (maxSize ${b.maxSize}, ${b.keys} keys), a backlog drained at once`,
    ],
    ["handler calls per job", `${round(b.callsPerJob, 4)}  (${b.handlerCalls} calls; goal ≤ 0.02)`],
    ["items/s", round(b.itemsPerSecond, 1).toString()],
    [
      "wcu / sqs / lambda per job",
      `${round(b.wcuPerJob, 4)} / ${round(b.sqsPerJob, 4)} / ${round(b.lambdaPerJob, 4)}`,
    ],
    [
      "usdPerMillionJobs",
      `$${b.usdPerMillionJobs.toFixed(4)}  (${singleUsd === undefined ? "" : `single kind in this run: $${singleUsd.toFixed(4)}; `}measured durations: $${b.usdPerMillionJobsMeasured.toFixed(4)})`,
    ],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  console.log("\nskyforge bench: batch scenario, local stack");
  for (const [k, v] of rows) console.log(`  ${k.padEnd(width)}  ${v}`);
}
