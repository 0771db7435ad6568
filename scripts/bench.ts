import { performance } from "node:perf_hooks";
import pLimit from "p-limit";
import { estimateCost, type JobUsage, lambdaGbSeconds } from "../lib/cost/estimate.ts";
import { type LocalStack, startLocalStack } from "../lib/local/stack.ts";
import type { Log } from "../lib/observability/log.ts";
import {
  DYNAMODB_READ_OPERATIONS,
  DYNAMODB_WRITE_OPERATIONS,
  type MeterSnapshot,
  RequestMeter,
  sumStats,
} from "../lib/observability/request-meter.ts";
import type { JobItem } from "../lib/store/job-item.ts";
import { type BundleBytes, bundleSizes } from "./bundle-sizes.ts";

/**
 * `npm run bench` (DESIGN §10): N echo jobs with 256-byte payloads through the local stack on the
 * default fenced-claim path, enqueued in batches of 100 with the producer's enqueueBatch (what the
 * enqueue Lambda does for `{ jobs }`). Requests are counted by SDK middleware on the stack's real
 * clients; the table goes to stdout and the last line is one JSON object.
 *
 * Env: BENCH_JOBS (default 2000), BENCH_WARMUP (default 100), BENCH_TIMEOUT_MS (default 90000),
 * BENCH_LAMBDA_DURATION = "assumed" (default) | "measured": which Lambda duration the headline cost uses.
 */

const JOBS = intEnv("BENCH_JOBS", 2000, 1);
const WARMUP = intEnv("BENCH_WARMUP", 100, 0);
const TIMEOUT_MS = intEnv("BENCH_TIMEOUT_MS", 90_000, 1000);
const BATCH = 100;
const PAYLOAD_BYTES = 256;
/** Lambda memory of the worker and the enqueue function, as infra/queues.ts and infra/api.ts declare them. */
const WORKER_MEMORY_MB = 512;
const ENQUEUE_MEMORY_MB = 512;
/**
 * Assumed Lambda wall time on AWS. The locally measured times are reported too, but they are set by
 * dynalite and fauxqs sharing this process's CPU with 100 records in flight, not by AWS latencies:
 * a worker batch of 10 records (concurrent) is ~2 sequential DynamoDB round trips (claim, finalize)
 * plus SDK and handler overhead; an enqueue call of 100 is one round of SendMessageBatch plus 100
 * PutItems at 16 in flight (~7 round trips).
 */
const ASSUMED_WORKER_BATCH_MS = 60;
const ASSUMED_ENQUEUE_CALL_MS = 100;
const DURATION_MODE = (() => {
  const v = process.env.BENCH_LAMBDA_DURATION ?? "assumed";
  if (v !== "assumed" && v !== "measured")
    throw new Error(`BENCH_LAMBDA_DURATION must be assumed or measured, got "${v}"`);
  return v;
})();

function intEnv(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be an integer ≥ ${min}, got "${raw}"`);
  return n;
}

/** A JSON payload whose serialized form is exactly PAYLOAD_BYTES bytes. */
function payload(seq: number): { seq: number; pad: string } {
  const bare = JSON.stringify({ seq, pad: "" }).length;
  return { seq, pad: "x".repeat(PAYLOAD_BYTES - bare) };
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
}

const mean = (xs: readonly number[]) => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);
const round = (x: number, digits: number) => Number(x.toFixed(digits));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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
    const items = await Promise.all(enqueued.ids.map((id) => limit(() => stack.engine.store.getJob(id))));
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

type Analysis = ReturnType<typeof analyse>;

function printTable(
  a: Analysis,
  snap: MeterSnapshot,
  bundles: BundleBytes,
  logCounts: Map<string, number>,
): void {
  const perJob = (x: number) => (x / a.n).toFixed(4);
  const usd = (x: number) => `$${x.toFixed(4)}`;
  const ms = (x: number) => `${x.toFixed(1)} ms`;
  const rows: [string, string][] = [
    [
      "jobs (measured window)",
      `${a.n} echo, ${PAYLOAD_BYTES}-byte payloads, ${a.enqueueInvocations} enqueueBatch calls of ≤${BATCH}`,
    ],
    ["jobsPerSecond", `${a.jobsPerSecond.toFixed(1)}  (first enqueue → last finishedAt)`],
    [
      "latencyMs p50 / p99",
      `${percentile(a.latencies, 50)} / ${percentile(a.latencies, 99)}  (createdAt → startedAt)`,
    ],
    [
      "requestsPerJob sqs",
      `${perJob(a.sqsRequests)}  (billed in 64 KB chunks: ${perJob(a.sqsBilled)}; idle polls excluded)`,
    ],
    ["requestsPerJob dynamodbWrite", perJob(a.ddbWrite.requests)],
    ["requestsPerJob dynamodbRead", perJob(a.ddbRead.requests)],
    [
      "requestsPerJob lambda",
      `${perJob(a.workerInvocations + a.enqueueInvocations)}  (worker ${a.workerInvocations} + enqueue ${a.enqueueInvocations} invocations)`,
    ],
    [
      "wcuPerJob",
      `${perJob(a.wcu)}  (ConsumedCapacity ${perJob(a.ddbWrite.writeUnits)} + ${a.ddbWrite.assumedWriteUnits} WCU for ${a.ddbWrite.unmetered} unmetered writes)`,
    ],
    [
      "rcuPerJob",
      `${perJob(a.rcu)}  (ConsumedCapacity ${perJob(a.ddbRead.readUnits)} + ${a.ddbRead.assumedReadUnits} RCU for ${a.ddbRead.unmetered} unmetered reads)`,
    ],
    [
      "lambda GB-s per job",
      `${a.usage.lambdaGbSeconds.toExponential(3)}  (${DURATION_MODE} durations; ${(a.gbs[DURATION_MODE]).toFixed(3)} GB-s in total)`,
    ],
    [
      "usdPerMillionJobs",
      `${usd(a.cost.usdPerMillionJobs)}  (goal ≤ $2.10; anchors: minimal $2.40, naive $3.48)`,
    ],
    ["  sqs", usd(a.cost.breakdown.sqs)],
    ["  dynamodb writes", usd(a.cost.breakdown.dynamodbWrite)],
    ["  dynamodb reads", usd(a.cost.breakdown.dynamodbRead)],
    ["  lambda requests", usd(a.cost.breakdown.lambdaRequests)],
    ["  lambda duration", usd(a.cost.breakdown.lambdaDuration)],
  ];
  for (const [name, bytes] of Object.entries(bundles)) {
    rows.push([`bundleBytes ${name}`, `${bytes}  (${(bytes / 1024).toFixed(0)} KiB, esbuild minified ESM)`]);
  }
  const width = Math.max(...rows.map(([k]) => k.length));
  console.log("skyforge bench: default fenced-claim path, local stack (dynalite + fauxqs)");
  for (const [k, v] of rows) console.log(`  ${k.padEnd(width)}  ${v}`);

  console.log("\n  usdPerMillionJobs by assumption");
  console.log(
    `  ${"lambda duration".padEnd(36)} ${"as counted".padStart(10)} ${"w/o emulator re-reads".padStart(22)}`,
  );
  for (const mode of ["assumed", "measured"] as const) {
    const label =
      mode === "assumed"
        ? `assumed ${ASSUMED_WORKER_BATCH_MS} ms/batch, ${ASSUMED_ENQUEUE_CALL_MS} ms/enqueue`
        : `measured locally`;
    const v = a.variants[mode];
    const counted = `${usd(v.asCounted.usdPerMillionJobs)}${mode === DURATION_MODE ? "*" : " "}`;
    console.log(
      `  ${label.padEnd(36)} ${counted.padStart(11)} ${usd(v.awsLike.usdPerMillionJobs).padStart(21)}`,
    );
  }
  console.log("  * the headline usdPerMillionJobs (BENCH_LAMBDA_DURATION picks the row)");

  console.log("\n  requests in the measured window");
  const header = ["operation", "requests", "per job", "errors", "WCU", "RCU", "unmetered"];
  console.log(
    `  ${header[0]?.padEnd(26)} ${header
      .slice(1)
      .map((h) => h.padStart(9))
      .join(" ")}`,
  );
  for (const [op, s] of Object.entries(snap.operations)) {
    const cells = [
      s.requests,
      perJob(s.requests),
      s.errors,
      round(s.writeUnits, 2),
      round(s.readUnits, 2),
      s.unmetered,
    ];
    console.log(`  ${op.padEnd(26)} ${cells.map((c) => String(c).padStart(9)).join(" ")}`);
  }

  const notes = [
    `idle polling: ${a.emptyReceives} empty ReceiveMessage long polls in the ${a.windowSeconds.toFixed(1)} s window (${(a.emptyReceives / a.windowSeconds).toFixed(1)}/s) are left out of the per-job figures: Lambda's SQS event source long-polls an idle queue just the same, so they are a fixed cost per queue, not per job.`,
    `lambda duration (${DURATION_MODE} in the headline): assumed = ${WORKER_MEMORY_MB} MB × ${ASSUMED_WORKER_BATCH_MS} ms per worker batch and ${ENQUEUE_MEMORY_MB} MB × ${ASSUMED_ENQUEUE_CALL_MS} ms per enqueue call. Measured locally (loopback emulators on this process's CPU): worker batch = ReceiveMessage response → DeleteMessageBatch request, matched by receipt handle, ${a.batchMs.length} batches, p50 ${ms(percentile(a.batchMs, 50))}, mean ${ms(mean(a.batchMs))}, p99 ${ms(percentile(a.batchMs, 99))}; enqueue call = enqueueBatch wall time, p50 ${ms(percentile(a.enqueueCallMs, 50))}, mean ${ms(mean(a.enqueueCallMs))}. Each invocation is rounded up to 1 ms.`,
    `lambda requests: worker invocations = ReceiveMessage responses with ≥ 1 message (${(a.workerInvocations ? a.n / a.workerInvocations : 0).toFixed(1)} jobs each); enqueue invocations = one per enqueueBatch call (the bench calls the producer as the enqueue function would).`,
    `unmetered DynamoDB requests are charged at the least AWS would bill: 1 WCU per failed conditional write, 1 RCU per strongly consistent read (0.5 eventually consistent) of an item ≤ 4 KB. ${a.ddbWrite.conditionalFailures} conditional writes failed; ${a.emulatorRereads} of the unmetered GetItems are the store's re-read after a lost condition, which AWS makes unnecessary (it returns the item with the error) — the right-hand column drops them.`,
    `job item size when done (attribute names + values, JSON): p50 ${percentile(a.itemBytes, 50)} B, max ${a.itemBytes.at(-1)} B; dynalite bills WCU by item size like DynamoDB but ignores GSI writes (none on this path).`,
    `dynamodb control plane in the window: ${a.ddbOther.requests} requests.`,
  ];
  for (const [message, count] of logCounts) notes.push(`stack log in the window: ${count} × ${message}`);
  console.log("\n  notes");
  for (const note of notes) console.log(`  - ${note}`);
}

const result = await run();
const analysis = analyse(result);
const bundles = await bundleSizes();
printTable(analysis, result.snap, bundles, result.logCounts);
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
    bundleBytes: bundles,
  }),
);
