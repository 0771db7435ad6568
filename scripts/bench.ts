import { performance } from "node:perf_hooks";
import pLimit from "p-limit";
import { app } from "../app/index.ts";
import { estimateCost, type JobUsage, lambdaGbSeconds } from "../bench/cost-estimate.ts";
import {
  DYNAMODB_READ_OPERATIONS,
  DYNAMODB_WRITE_OPERATIONS,
  type MeterSnapshot,
  RequestMeter,
  sumStats,
} from "../bench/request-meter.ts";
import type { Log } from "../lib/observability/log.ts";
import type { JobItem } from "../lib/store/job-item.ts";
import { getJob } from "../lib/store/read-ops.ts";
import { type LocalStack, startLocalStack } from "../local/stack.ts";
import {
  ASSUMED_ENQUEUE_CALL_MS,
  ASSUMED_WORKER_BATCH_MS,
  BATCH,
  DURATION_MODE,
  ENQUEUE_MEMORY_MB,
  JOBS,
  mean,
  payload,
  percentile,
  round,
  sleep,
  TIMEOUT_MS,
  WARMUP,
  WORKER_MEMORY_MB,
} from "./bench-config.ts";
import { printTable } from "./bench-report.ts";
import { deployedSdkOption } from "./bundle-sizes.ts";
import { measureBudgets } from "./cold-start.ts";

/**
 * `npm run bench` (docs/architecture.md §11): N echo jobs with 256-byte payloads through the local stack on the
 * default fenced-claim path, enqueued in batches of 100 with the producer's enqueueBatch (what the
 * enqueue Lambda does for `{ jobs }`). Requests are counted by SDK middleware on the stack's real
 * clients; the table goes to stdout and the last line is one JSON object.
 *
 * Env: BENCH_JOBS (default 2000), BENCH_WARMUP (default 100), BENCH_TIMEOUT_MS (default 90000),
 * BENCH_LAMBDA_DURATION = "assumed" (default) | "measured": which Lambda duration the headline cost uses.
 */

/** Counts the stack's warnings and errors by message, so the report can show anything unusual. */
function countingLog(): { log: Log; counts: Map<string, number> } {
  const counts = new Map<string, number>();
  const note = (level: string) => (message: string) => {
    const key = `${level}: ${message}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  };
  return { log: { debug() {}, info() {}, warn: note("warn"), error: note("error") }, counts };
}

async function enqueueAll(stack: LocalStack, count: number, seqBase: number) {
  const ids: string[] = [];
  const callMs: number[] = [];
  for (let start = 0; start < count; start += BATCH) {
    const size = Math.min(BATCH, count - start);
    const requests = Array.from({ length: size }, (_, i) => ({
      kind: "echo",
      payload: payload(seqBase + start + i),
    }));
    const t = performance.now();
    const results = await stack.engine.producer.enqueueBatch(requests);
    callMs.push(performance.now() - t);
    for (const r of results) {
      if (!r.id) throw new Error(`enqueue failed: ${JSON.stringify(r.error)}`);
      ids.push(r.id);
    }
  }
  return { ids, callMs };
}

const deleted = (s: MeterSnapshot) =>
  (s.operations["sqs:DeleteMessageBatch"]?.messages ?? 0) +
  (s.operations["sqs:DeleteMessage"]?.messages ?? 0);

/** Bounded poll on in-memory counters only (no AWS requests): every job succeeded and its message was deleted. */
async function waitForDrain(
  stack: LocalStack,
  meter: RequestMeter,
  succeeded: number,
  deletes: number,
): Promise<void> {
  const deadline = performance.now() + TIMEOUT_MS;
  while (performance.now() < deadline) {
    if (stack.metrics.total("succeeded") >= succeeded && deleted(meter.snapshot()) >= deletes) return;
    const failed = stack.metrics.total("dead") + stack.metrics.total("cancelled");
    if (failed > 0) throw new Error(`${failed} jobs ended dead or cancelled; echo jobs should all succeed`);
    await sleep(5);
  }
  throw new Error(
    `timed out after ${TIMEOUT_MS} ms: ${stack.metrics.total("succeeded")}/${succeeded} succeeded, ` +
      `${deleted(meter.snapshot())}/${deletes} messages deleted`,
  );
}

async function run() {
  const meter = new RequestMeter();
  const { log, counts: logCounts } = countingLog();
  const stack = await startLocalStack({
    app,
    port: 0,
    log,
    instrument: ({ dynamodb, sqs }) => {
      meter.attach(dynamodb, "dynamodb");
      meter.attach(sqs, "sqs");
    },
  });
  try {
    // Warm-up: first-request costs (connections, JIT, table and queue caches) stay out of the figures.
    if (WARMUP > 0) {
      await enqueueAll(stack, WARMUP, 1_000_000);
      await waitForDrain(stack, meter, WARMUP, WARMUP);
    }
    meter.reset();
    logCounts.clear();

    const t0 = Date.now();
    const enqueued = await enqueueAll(stack, JOBS, 0);
    await waitForDrain(stack, meter, WARMUP + JOBS, JOBS);
    const snap = meter.snapshot();

    // Read back after the snapshot, so these reads are not counted as the jobs' own.
    const limit = pLimit(16);
    const items = await Promise.all(enqueued.ids.map((id) => limit(() => getJob(stack.engine.store, id))));
    const notDone = items.filter((i) => i?.status !== "done");
    if (notDone.length > 0) throw new Error(`${notDone.length} jobs are not done after the run`);
    return { snap, items: items as JobItem[], t0, enqueueCallMs: enqueued.callMs, logCounts };
  } finally {
    await stack.stop();
  }
}

type Run = Awaited<ReturnType<typeof run>>;

function analyse(r: Run) {
  const { snap, items, t0, enqueueCallMs } = r;
  const n = items.length;
  const ops = snap.operations;

  const lastDone = Math.max(...items.map((i) => i.finishedAt ?? 0));
  const jobsPerSecond = n / ((lastDone - t0) / 1000);
  const latencies = items.map((i) => (i.startedAt ?? Number.NaN) - i.createdAt).sort((a, b) => a - b);
  const itemBytes = items.map((i) => JSON.stringify(i).length).sort((a, b) => a - b);

  const receive = ops["sqs:ReceiveMessage"];
  const emptyReceives = (receive?.requests ?? 0) - (receive?.nonEmptyReceives ?? 0) - (receive?.errors ?? 0);
  const sqs = sumStats(snap, (s) => s === "sqs");
  const ddbWrite = sumStats(snap, (s, op) => s === "dynamodb" && DYNAMODB_WRITE_OPERATIONS.has(op));
  const ddbRead = sumStats(snap, (s, op) => s === "dynamodb" && DYNAMODB_READ_OPERATIONS.has(op));
  const ddbOther = sumStats(
    snap,
    (s, op) => s === "dynamodb" && !DYNAMODB_WRITE_OPERATIONS.has(op) && !DYNAMODB_READ_OPERATIONS.has(op),
  );

  // Per job, SQS is everything but the empty long polls: an idle event source pays those anyway.
  const sqsRequests = sqs.requests - emptyReceives;
  const sqsBilled = sqs.billedRequests - emptyReceives;
  // Reported ConsumedCapacity plus the minimum charge of requests that report none.
  const wcu = ddbWrite.writeUnits + ddbWrite.assumedWriteUnits;
  const rcu = ddbRead.readUnits + ddbRead.assumedReadUnits;
  // The store re-reads an item after a lost condition when the error carries no item (dynalite never
  // returns one; AWS does for ReturnValuesOnConditionCheckFailure), without ReturnConsumedCapacity.
  const emulatorRereads = Math.min(ops["dynamodb:GetItem"]?.unmetered ?? 0, ddbWrite.conditionalFailures);

  const workerInvocations = receive?.nonEmptyReceives ?? 0;
  const enqueueInvocations = enqueueCallMs.length;
  const batchMs = [...snap.batchDurationsMs].sort((a, b) => a - b);
  const gbs = {
    measured:
      batchMs.reduce((sum, ms) => sum + lambdaGbSeconds(WORKER_MEMORY_MB, ms), 0) +
      Math.max(0, workerInvocations - batchMs.length) * lambdaGbSeconds(WORKER_MEMORY_MB, mean(batchMs)) +
      enqueueCallMs.reduce((sum, ms) => sum + lambdaGbSeconds(ENQUEUE_MEMORY_MB, ms), 0),
    assumed:
      workerInvocations * lambdaGbSeconds(WORKER_MEMORY_MB, ASSUMED_WORKER_BATCH_MS) +
      enqueueInvocations * lambdaGbSeconds(ENQUEUE_MEMORY_MB, ASSUMED_ENQUEUE_CALL_MS),
  };

  const usageFor = (mode: "assumed" | "measured", withRereads: boolean): JobUsage => ({
    sqsRequests: sqsBilled / n,
    dynamodbWriteUnits: wcu / n,
    dynamodbReadUnits: (rcu - (withRereads ? 0 : emulatorRereads)) / n,
    lambdaInvocations: (workerInvocations + enqueueInvocations) / n,
    lambdaGbSeconds: gbs[mode] / n,
  });
  const usage = usageFor(DURATION_MODE, true);
  const cost = estimateCost(usage);
  const variants = {
    assumed: {
      asCounted: estimateCost(usageFor("assumed", true)),
      awsLike: estimateCost(usageFor("assumed", false)),
    },
    measured: {
      asCounted: estimateCost(usageFor("measured", true)),
      awsLike: estimateCost(usageFor("measured", false)),
    },
  };

  return {
    n,
    jobsPerSecond,
    latencies,
    itemBytes,
    emptyReceives,
    sqsRequests,
    sqsBilled,
    ddbWrite,
    ddbRead,
    ddbOther,
    wcu,
    rcu,
    emulatorRereads,
    workerInvocations,
    enqueueInvocations,
    batchMs,
    enqueueCallMs: [...enqueueCallMs].sort((a, b) => a - b),
    gbs,
    usage,
    cost,
    variants,
    windowSeconds: snap.elapsedMs / 1000,
  };
}

export type Analysis = ReturnType<typeof analyse>;

const result = await run();
const analysis = analyse(result);
// After the stack has stopped, so the emulators don't compete with the process starts for the CPU.
const budgets = await measureBudgets();
printTable(analysis, result.snap, budgets, result.logCounts);
const n = analysis.n;
console.log(
  JSON.stringify({
    jobsPerSecond: round(analysis.jobsPerSecond, 1),
    latencyMs: { p50: percentile(analysis.latencies, 50), p99: percentile(analysis.latencies, 99) },
    requestsPerJob: {
      sqs: round(analysis.sqsRequests / n, 4),
      dynamodbWrite: round(analysis.ddbWrite.requests / n, 4),
      dynamodbRead: round(analysis.ddbRead.requests / n, 4),
      lambda: round((analysis.workerInvocations + analysis.enqueueInvocations) / n, 4),
    },
    wcuPerJob: round(analysis.wcu / n, 4),
    rcuPerJob: round(analysis.rcu / n, 4),
    usdPerMillionJobs: round(analysis.cost.usdPerMillionJobs, 4),
    bundleBytes: Object.fromEntries(budgets.functions.map((f) => [f.name, f.bytes])),
    coldStart: {
      sdk: deployedSdkOption,
      bareNodeMs: round(budgets.bareNodeMs, 1),
      importMs: Object.fromEntries(budgets.functions.map((f) => [f.name, round(f.importMs, 1)])),
      ratio: Object.fromEntries(budgets.functions.map((f) => [f.name, round(f.ratio, 2)])),
      sizeBudgetMet: budgets.functions.every((f) => f.sizeOk),
      importBudgetMet: budgets.functions.every((f) => f.importOk),
    },
  }),
);
