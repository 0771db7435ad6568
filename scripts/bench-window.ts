import { performance } from "node:perf_hooks";
import pLimit from "p-limit";
import { benchApp, enqueuedKind } from "../bench/bench-app.ts";
import type { CompletionStart } from "../bench/completion-kind.ts";
import { type MeterSnapshot, RequestMeter } from "../bench/request-meter.ts";
import { WriteLedger } from "../bench/write-ledger.ts";
import type { App } from "../lib/declarations/define-app.ts";
import { DeclarationError } from "../lib/declarations/validate-app.ts";
import { ClientError } from "../lib/errors.ts";
import { laneGuarantees } from "../lib/job/lanes.ts";
import { buildRegistry } from "../lib/job/registry.ts";
import type { EnqueueRequest } from "../lib/job/schemas.ts";
import type { Log } from "../lib/observability/log.ts";
import { validateEnqueue } from "../lib/producer/validate.ts";
import type { JobItem } from "../lib/store/job-item.ts";
import { getJob } from "../lib/store/read-ops.ts";
import { type LocalStack, startLocalStack } from "../local/stack.ts";
import type { RunShape } from "./bench-args.ts";
import {
  ASSUMED_ENQUEUE_CALL_MS,
  payload,
  percentile,
  round,
  sleep,
  TIMEOUT_MS,
  WARMUP,
} from "./bench-config.ts";
import { enqueueTimed } from "./bench-enqueue.ts";
import { costPerUnit, meteredUsage } from "./bench-usage.ts";

/**
 * One measured single-kind window of `npm run bench` (docs/architecture.md §11): jobs of the run's
 * shape through the local stack, enqueued in batches of 100 with the producer's enqueueBatch (what
 * the enqueue Lambda does for `{ jobs }`), after a warm-up. Requests are counted by SDK middleware
 * on the stack's real clients. A single run measures one window (`--scenario group` and `all` then run
 * the group scenario on its stack, scripts/bench-scenarios.ts); the
 * matrix one per cell, each on its own stack.
 */

/** The engine refused the run as asked (its declarations, or a job's request): not a failure of the bench. */
export class EngineRefusal extends Error {
  override readonly name = "EngineRefusal";
}

/** Counts the stack's warnings and errors by message, so the report can show anything unusual. */
function countingLog(): { log: Log; counts: Map<string, number> } {
  const counts = new Map<string, number>();
  const note = (level: string) => (message: string) => {
    const key = `${level}: ${message}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  };
  return { log: { debug() {}, info() {}, warn: note("warn"), error: note("error") }, counts };
}

/** Job `seq`'s request: the shape's kind, a payload of exactly payloadBytes, a uniqueKey with --unique. */
function jobRequest(shape: RunShape, seq: number, runTag: string): EnqueueRequest {
  return {
    kind: enqueuedKind(shape),
    payload: payload(seq, shape.payloadBytes),
    ...(shape.unique ? { uniqueKey: `bench-${runTag}-${seq}` } : {}),
  };
}

/**
 * The app for `shape`, checked as the engine would: its declarations (defineApp) and one job's
 * request (the producer's own validation: the kind's payload schema, the size limits).
 * Throws EngineRefusal with the engine's reason.
 */
export function benchAppFor(shape: RunShape, onCompletionStart: (start: CompletionStart) => void): App {
  let app: App;
  try {
    app = benchApp(onCompletionStart, shape);
  } catch (err) {
    if (err instanceof DeclarationError) throw new EngineRefusal(err.problems.join("; "));
    throw err;
  }
  try {
    validateEnqueue(jobRequest(shape, 0, "check"), buildRegistry(app.kinds), app.queues);
  } catch (err) {
    if (err instanceof ClientError)
      throw new EngineRefusal(`the producer refuses ${shape.kind}'s job: ${err.code}: ${err.message}`);
    throw err;
  }
  return app;
}

export interface BenchStack {
  shape: RunShape;
  stack: LocalStack;
  meter: RequestMeter;
  ledger: WriteLedger;
  completionStarts: Map<string, CompletionStart>;
  logCounts: Map<string, number>;
  /** Makes this run's uniqueKeys its own. */
  runTag: string;
}

export async function startBenchStack(shape: RunShape): Promise<BenchStack> {
  const meter = new RequestMeter();
  const ledger = new WriteLedger();
  const completionStarts = new Map<string, CompletionStart>();
  const { log, counts: logCounts } = countingLog();
  const app = benchAppFor(shape, (start) => completionStarts.set(start.groupId, start));
  const stack = await startLocalStack({
    app,
    port: 0,
    log,
    instrument: (clients) => {
      meter.attachAll(clients);
      ledger.attach(clients.dynamodb);
    },
  });
  const runTag = Date.now().toString(36);
  return { shape, stack, meter, ledger, completionStarts, logCounts, runTag };
}

const enqueueAll = (bench: BenchStack, count: number, seqBase: number) =>
  enqueueTimed(
    bench.stack,
    Array.from({ length: count }, (_, i) => jobRequest(bench.shape, seqBase + i, bench.runTag)),
    (error) => new EngineRefusal(`enqueue refused: ${JSON.stringify(error)}`),
  );

const deleted = (s: MeterSnapshot) =>
  (s.operations["sqs:DeleteMessageBatch"]?.messages ?? 0) +
  (s.operations["sqs:DeleteMessage"]?.messages ?? 0);

/** The first of `ids` that ended dead or cancelled, with its last error, for the failure's message. */
async function firstFailure(stack: LocalStack, ids: readonly string[]): Promise<string> {
  const limit = pLimit(16);
  const items = await Promise.all(ids.map((id) => limit(() => getJob(stack.engine.store, id))));
  const failed = items.find((i) => i?.status === "dead" || i?.status === "cancelled");
  return failed ? `job ${failed.id} ended ${failed.status}: ${failed.lastError ?? "no error recorded"}` : "";
}

/** Bounded poll on in-memory counters only (no AWS requests): every job succeeded and its message was deleted. */
async function waitForDrain(bench: BenchStack, ids: readonly string[], succeeded: number, deletes: number) {
  const { stack, meter } = bench;
  const deadline = performance.now() + TIMEOUT_MS;
  while (performance.now() < deadline) {
    if (stack.metrics.total("succeeded") >= succeeded && deleted(meter.snapshot()) >= deletes) return;
    const failed = stack.metrics.total("dead") + stack.metrics.total("cancelled");
    if (failed > 0)
      throw new Error(
        `${failed} jobs ended dead or cancelled; every job should succeed. ${await firstFailure(stack, ids)}`,
      );
    await sleep(5);
  }
  throw new Error(
    `timed out after ${TIMEOUT_MS} ms: ${stack.metrics.total("succeeded")}/${succeeded} succeeded, ` +
      `${deleted(meter.snapshot())}/${deletes} messages deleted`,
  );
}

/** A warm-up, then `jobs` jobs in a fresh meter window, drained, and their items read back. */
export async function measureWindow(bench: BenchStack, jobs: number) {
  const { stack, meter, logCounts } = bench;
  // Warm-up: first-request costs (connections, JIT, table and queue caches) stay out of the figures.
  if (WARMUP > 0) {
    const warm = await enqueueAll(bench, WARMUP, 1_000_000);
    await waitForDrain(bench, warm.ids, WARMUP, WARMUP);
  }
  meter.reset();
  logCounts.clear();

  const t0 = Date.now();
  const enqueued = await enqueueAll(bench, jobs, 0);
  await waitForDrain(bench, enqueued.ids, WARMUP + jobs, jobs);
  const drainedAt = Date.now();
  const snap = meter.snapshot();

  // Read back after the snapshot, so these reads are not counted as the jobs' own.
  const limit = pLimit(16);
  const found = await Promise.all(enqueued.ids.map((id) => limit(() => getJob(stack.engine.store, id))));
  // A lane that keeps no record of a success (fire-and-forget) leaves no item; the counters above
  // saw every job succeed and its message deleted.
  const itemless = !laneGuarantees[bench.shape.lane].resultStored;
  const notDone = found.filter((i) => (i === undefined ? !itemless : i.status !== "done"));
  if (notDone.length > 0) throw new Error(`${notDone.length} jobs are not done after the run`);
  const items = found.filter((i): i is JobItem => i !== undefined);
  // A copy: the stack's log goes on counting after the window.
  return { jobs, snap, items, t0, drainedAt, enqueueCallMs: enqueued.callMs, logCounts: new Map(logCounts) };
}

export type Window = Awaited<ReturnType<typeof measureWindow>>;

export function analyseWindow(w: Window) {
  const { snap, items, t0, enqueueCallMs } = w;
  const n = w.jobs;
  // The last finishedAt when every job left its item; else when the bench saw the queue drained.
  const lastDone = items.length === n ? Math.max(...items.map((i) => i.finishedAt ?? 0)) : w.drainedAt;
  const jobsPerSecond = n / ((lastDone - t0) / 1000);
  const latencies = items.map((i) => (i.startedAt ?? Number.NaN) - i.createdAt).sort((a, b) => a - b);
  const itemBytes = items.map((i) => JSON.stringify(i).length).sort((a, b) => a - b);

  const metered = meteredUsage(snap, {
    callMs: enqueueCallMs,
    assumedMs: enqueueCallMs.map(() => ASSUMED_ENQUEUE_CALL_MS),
  });
  const { usage, cost, variants, claimStorageUsdPerMillion } = costPerUnit(metered, n);

  return {
    n,
    jobsPerSecond,
    latencies,
    itemBytes,
    ...metered,
    usage,
    cost,
    variants,
    claimStorageUsdPerMillion,
  };
}

export type Analysis = ReturnType<typeof analyseWindow>;

/** What ran: `unique` and `failOnce` appear only when set, so a default run's line is today's plus three fields. */
export const shapeJson = (shape: RunShape) => ({
  kind: shape.kind,
  lane: shape.lane,
  payloadBytes: shape.payloadBytes,
  ...(shape.unique ? { unique: true } : {}),
  ...(shape.failOnce ? { failOnce: true } : {}),
});

/** The window's fields of the JSON line (`--scenario all` puts the other scenarios' entries beside them). */
export function windowJson(a: Analysis, shape: RunShape) {
  const n = a.n;
  return {
    ...shapeJson(shape),
    jobsPerSecond: round(a.jobsPerSecond, 1),
    latencyMs: { p50: percentile(a.latencies, 50), p99: percentile(a.latencies, 99) },
    requestsPerJob: {
      sqs: round(a.sqsRequests / n, 4),
      dynamodbWrite: round(a.ddbWrite.requests / n, 4),
      dynamodbRead: round(a.ddbRead.requests / n, 4),
      lambda: round((a.workerInvocations + a.enqueueInvocations) / n, 4),
      s3: round((a.s3Puts + a.s3Gets) / n, 4),
    },
    wcuPerJob: round(a.wcu / n, 4),
    rcuPerJob: round(a.rcu / n, 4),
    usdPerMillionJobs: round(a.cost.usdPerMillionJobs, 4),
    claimStorageUsdPerMillion: round(a.claimStorageUsdPerMillion, 4),
  };
}
