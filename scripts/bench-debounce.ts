import { performance } from "node:perf_hooks";
import pLimit from "p-limit";
import {
  BENCH_DEBOUNCE_KIND,
  BENCH_DEBOUNCE_QUEUE,
  DEBOUNCE_MAX_DELAY_SECONDS,
  DEBOUNCE_PERIOD_SECONDS,
  debounceBenchApp,
} from "../bench/debounce-kind.ts";
import { NOOP_KIND } from "../bench/noop-kind.ts";
import { type MeterSnapshot, type OperationStats, RequestMeter } from "../bench/request-meter.ts";
import type { WriteLedger } from "../bench/write-ledger.ts";
import { systemClock } from "../lib/clock.ts";
import type { App } from "../lib/declarations/define-app.ts";
import { buildEngine, openDurableRun } from "../lib/engine.ts";
import { silentLog } from "../lib/observability/log.ts";
import type { Engine } from "../lib/services/engine-services.ts";
import { getJob } from "../lib/store/read-ops.ts";
import { CLAIMS_BUCKET, dynamoClient, s3Client, sqsClient } from "../local/emulators.ts";
import { type LocalStack, startLocalStack } from "../local/stack.ts";
import { ASSUMED_ENQUEUE_CALL_MS, BATCH, intEnv, payload, sleep, TIMEOUT_MS } from "./bench-config.ts";
import { meteredUsage } from "./bench-usage.ts";

/**
 * The debounce scenario of `npm run bench` (docs/architecture.md §19; `--scenario debounce` runs it
 * alone): ENQUEUES enqueues of the bench's trailing debounce kind over KEYS keys, each key's in a
 * tight burst, KEYS_PER_CALL keys interleaved in each call of 100, so each burst closes well inside
 * the maximum delay and should run once. Then PLAIN_JOBS plain jobs of the no-op kind (fenced)
 * measured the same way, the enqueue its figures are compared with.
 *
 * The enqueues go through a producer of their own, on clients of their own (as the enqueue Lambda's
 * are on AWS), metered apart from the stack's, which the worker uses: so the enqueue's own requests
 * are told from a run's. The wait reads the store on a third, unmetered client.
 */
/** BENCH_DEBOUNCE_ENQUEUES: whole calls of 100 (the bench's own test runs a small one), 20 a key. */
export const ENQUEUES = Math.max(1, Math.round(intEnv("BENCH_DEBOUNCE_ENQUEUES", 1000, 100) / BATCH)) * BATCH;
const PER_KEY = 20;
export const KEYS = ENQUEUES / PER_KEY;
const KEYS_PER_CALL = BATCH / PER_KEY;
export const PLAIN_JOBS = ENQUEUES;
/**
 * Assumed wall time on AWS of one request a keyed enqueue sends: the producer enqueues a call's
 * debounced entries one at a time (a burst keeps its order), each one's requests one after another,
 * so a call lasts its requests × a round trip, not ASSUMED_ENQUEUE_CALL_MS (100 plain entries at 16
 * in flight).
 */
export const ASSUMED_SEQUENTIAL_REQUEST_MS = 8;

/** The requests, in the order sent: call c holds keys c·5 … c·5+4, round robin, 20 enqueues each. */
export function debounceRequests(runTag: string, seqBase: number) {
  return Array.from({ length: ENQUEUES }, (_, i) => {
    const call = Math.floor(i / BATCH);
    const key = call * KEYS_PER_CALL + (i % KEYS_PER_CALL);
    return { kind: BENCH_DEBOUNCE_KIND, payload: { ...payload(seqBase + i, 256), key: `${runTag}-${key}` } };
  });
}

export type Clients = { dynamodb: { destroy(): void }; sqs: { destroy(): void }; s3: { destroy(): void } };

interface Side {
  stack: LocalStack;
  producer: Engine;
  /** Unmetered: the bench's own reads of the store. */
  reader: Engine;
  enqueueMeter: RequestMeter;
  workerMeter: RequestMeter;
}

/** An engine on fresh clients to the stack's emulators (metered, or not); `clients` to destroy them. */
export function engineBeside(
  stack: LocalStack,
  app: App,
  clients: Clients[],
  meter?: RequestMeter,
  ledger?: WriteLedger,
): Engine {
  const own = {
    dynamodb: dynamoClient(stack.endpoints.dynamodb),
    sqs: sqsClient(stack.endpoints.sqs),
    s3: s3Client(stack.endpoints.sqs),
  };
  clients.push(own);
  meter?.attachAll(own);
  ledger?.attach(own.dynamodb);
  return buildEngine({
    durableRuns: openDurableRun,
    app,
    ...own,
    table: stack.engine.store.table,
    claimsBucket: CLAIMS_BUCKET,
    queueUrls: new Map([...stack.queues].map(([name, q]) => [name, q.url])),
    clock: systemClock,
    metrics: stack.metrics,
    log: silentLog,
  });
}

/** Enqueues `requests` in calls of 100, each call's wall time and requests (all sent one after another). */
async function enqueueCalls(side: Side, requests: readonly unknown[]) {
  const ids: string[] = [];
  let created = 0;
  let joined = 0;
  const callMs: number[] = [];
  const callRequests: number[] = [];
  for (let start = 0; start < requests.length; start += BATCH) {
    const before = side.enqueueMeter.snapshot();
    const t = performance.now();
    const results = await side.producer.producer.enqueueBatch(requests.slice(start, start + BATCH));
    callMs.push(performance.now() - t);
    callRequests.push(sequentialRequests(before, side.enqueueMeter.snapshot()));
    for (const r of results) {
      if (!r.id) throw new Error(`debounce scenario: enqueue refused: ${JSON.stringify(r.error)}`);
      ids.push(r.id);
      if (!r.duplicate) created += 1;
      if (r.debounced) joined += 1;
    }
  }
  return { ids, created, joined, callMs, callRequests };
}

/** The enqueue's meter and the stack's (worker's) over one window, as one to price: every operation's counts summed, the longer window kept. */
export function mergeSnapshots(a: MeterSnapshot, b: MeterSnapshot): MeterSnapshot {
  const operations: Record<string, OperationStats> = {};
  for (const snap of [a, b])
    for (const [op, stats] of Object.entries(snap.operations)) {
      const sum = operations[op];
      if (!sum) {
        operations[op] = { ...stats };
        continue;
      }
      for (const k of Object.keys(sum) as (keyof OperationStats)[]) sum[k] += stats[k];
    }
  return {
    operations,
    batchDurationsMs: [...a.batchDurationsMs, ...b.batchDurationsMs],
    elapsedMs: Math.max(a.elapsedMs, b.elapsedMs),
  };
}

const totalRequests = (s: MeterSnapshot) =>
  Object.values(s.operations).reduce((n, stats) => n + stats.requests, 0);

/** The requests one enqueue call sent: the meter's count after it, less before. */
export const sequentialRequests = (before: MeterSnapshot, after: MeterSnapshot) =>
  totalRequests(after) - totalRequests(before);

const deleted = (s: MeterSnapshot) =>
  (s.operations["sqs:DeleteMessageBatch"]?.messages ?? 0) +
  (s.operations["sqs:DeleteMessage"]?.messages ?? 0);

/**
 * Bounded: until the worker deleted a message per job made (in memory) and the store has every
 * answered id done (read unmetered). A job ending otherwise is the scenario's failure.
 */
async function waitDone(side: Side, ids: readonly string[], messages: number) {
  const distinct = [...new Set(ids)];
  const limit = pLimit(16);
  const deadline = performance.now() + TIMEOUT_MS;
  for (;;) {
    if (deleted(side.workerMeter.snapshot()) >= messages) {
      const items = await Promise.all(distinct.map((id) => limit(() => getJob(side.reader.store, id))));
      const ended = items.find((i) => i?.status === "dead" || i?.status === "cancelled");
      if (ended) throw new Error(`debounce scenario: job ${ended.id} ended ${ended.status}`);
      if (items.every((i) => i?.status === "done")) return;
    }
    if (performance.now() > deadline)
      throw new Error(
        `debounce scenario: timed out with ${deleted(side.workerMeter.snapshot())}/${messages} deleted`,
      );
    await sleep(100);
  }
}

/** One metered window: `requests` enqueued, then every answered job done. */
async function measure(side: Side, requests: readonly unknown[], assumedMs: (requests: number) => number) {
  const invocationsBefore = side.stack.eventSources.invocations(BENCH_DEBOUNCE_QUEUE);
  side.enqueueMeter.reset();
  side.workerMeter.reset();
  const out = await enqueueCalls(side, requests);
  const enqueueSide = side.enqueueMeter.snapshot();
  await waitDone(side, out.ids, out.created);
  const whole = mergeSnapshots(enqueueSide, side.workerMeter.snapshot());
  const calls = { callMs: out.callMs, assumedMs: out.callRequests.map(assumedMs) };
  const invocations = side.stack.eventSources.invocations(BENCH_DEBOUNCE_QUEUE) - invocationsBefore;
  return {
    ...out,
    enqueue: meteredUsage(enqueueSide, calls, 0),
    whole: meteredUsage(whole, calls, invocations),
  };
}

export type DebounceWindow = Awaited<ReturnType<typeof measure>>;

const plainRequests = (jobs: number, seqBase: number) =>
  Array.from({ length: jobs }, (_, i) => ({ kind: NOOP_KIND, payload: payload(seqBase + i, 256) }));

export async function runDebounceScenario() {
  const workerMeter = new RequestMeter();
  const enqueueMeter = new RequestMeter();
  let runs = 0;
  const app = debounceBenchApp(() => {
    runs += 1;
  });
  const stack = await startLocalStack({
    app,
    port: 0,
    log: silentLog,
    autoTick: false,
    instrument: (clients) => workerMeter.attachAll(clients),
  });
  const clients: Clients[] = [];
  const side: Side = {
    stack,
    producer: engineBeside(stack, app, clients, enqueueMeter),
    reader: engineBeside(stack, app, clients),
    enqueueMeter,
    workerMeter,
  };
  const runTag = Date.now().toString(36);
  try {
    // Warm-ups, unreported: the first requests of each code path (one call of each).
    await measure(side, debounceRequests(`${runTag}w`, 5_000_000).slice(0, BATCH), sequentialMs);
    await measure(side, plainRequests(BATCH, 6_000_000), () => ASSUMED_ENQUEUE_CALL_MS);
    runs = 0;
    const debounced = await measure(side, debounceRequests(runTag, 0), sequentialMs);
    const debounceRuns = runs;
    const plain = await measure(side, plainRequests(PLAIN_JOBS, 7_000_000), () => ASSUMED_ENQUEUE_CALL_MS);
    return {
      enqueues: ENQUEUES,
      keys: KEYS,
      periodSeconds: DEBOUNCE_PERIOD_SECONDS,
      maxDelaySeconds: DEBOUNCE_MAX_DELAY_SECONDS,
      runs: debounceRuns,
      debounced,
      plain,
    };
  } finally {
    for (const c of clients) for (const client of Object.values(c)) client.destroy();
    await stack.stop();
  }
}

const sequentialMs = (requests: number) => requests * ASSUMED_SEQUENTIAL_REQUEST_MS;

export type DebounceRun = Awaited<ReturnType<typeof runDebounceScenario>>;
