import { performance } from "node:perf_hooks";
import pLimit from "p-limit";
import { benchApp } from "../bench/bench-app.ts";
import type { CompletionStart } from "../bench/completion-kind.ts";
import { type MeterSnapshot, RequestMeter } from "../bench/request-meter.ts";
import { WriteLedger } from "../bench/write-ledger.ts";
import type { Log } from "../lib/observability/log.ts";
import type { JobItem } from "../lib/store/job-item.ts";
import { getJob } from "../lib/store/read-ops.ts";
import { type LocalStack, startLocalStack } from "../local/stack.ts";
import {
  ASSUMED_ENQUEUE_CALL_MS,
  BATCH,
  GROUP_CHILDREN,
  GROUP_CONCURRENCY,
  GROUPS,
  JOBS,
  payload,
  percentile,
  round,
  sleep,
  TIMEOUT_MS,
  WARMUP,
} from "./bench-config.ts";
import { analyseGroups, runGroupScenario } from "./bench-group.ts";
import { groupJson, printGroupTable } from "./bench-group-report.ts";
import { printTable } from "./bench-report.ts";
import { costPerUnit, meteredUsage } from "./bench-usage.ts";
import { deployedSdkOption } from "./bundle-sizes.ts";
import { measureBudgets } from "./cold-start.ts";

/**
 * `npm run bench` (docs/architecture.md §11): N echo jobs with 256-byte payloads through the local stack on the
 * default fenced-claim path, enqueued in batches of 100 with the producer's enqueueBatch (what the
 * enqueue Lambda does for `{ jobs }`). Requests are counted by SDK middleware on the stack's real
 * clients; the table goes to stdout and the last line is one JSON object.
 *
 * Then the group scenario (scripts/bench-group.ts) on the same stack: groups of echo children through
 * engine.groups.create, each completed by the bench's own completion kind (bench/bench-app.ts).
 *
 * Env: BENCH_JOBS (default 2000), BENCH_WARMUP (default 100), BENCH_TIMEOUT_MS (default 90000),
 * BENCH_LAMBDA_DURATION = "assumed" (default) | "measured": which Lambda duration the headline cost uses,
 * BENCH_GROUPS (default 5), BENCH_GROUP_CHILDREN (default 1000, at most 1000), BENCH_GROUP_CONCURRENCY
 * (groups in flight, default 1).
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
  const ledger = new WriteLedger();
  const completionStarts = new Map<string, CompletionStart>();
  const { log, counts: logCounts } = countingLog();
  const stack = await startLocalStack({
    app: benchApp((start) => completionStarts.set(start.groupId, start)),
    port: 0,
    log,
    instrument: ({ dynamodb, sqs }) => {
      meter.attach(dynamodb, "dynamodb");
      meter.attach(sqs, "sqs");
      ledger.attach(dynamodb);
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
    // A copy: the stack's log goes on counting through the group scenario.
    const single = {
      snap,
      items: items as JobItem[],
      t0,
      enqueueCallMs: enqueued.callMs,
      logCounts: new Map(logCounts),
    };

    // The scheduled functions cost per minute, not per job (`npm run bench:ops` prices them), and a
    // group completes without them: a tick (the local cleanup's sweep is a table Scan) stays out of
    // the group window, which is long enough to catch one.
    await stack.ticker.stop();
    // The group scenario, warmed up on one small group first (the group code's own first requests).
    const groupRun = (groups: number, children: number, concurrency: number, seqBase: number) =>
      runGroupScenario(stack, meter, ledger, completionStarts, {
        groups,
        children,
        concurrency,
        seqBase,
        timeoutMs: TIMEOUT_MS,
      });
    if (WARMUP > 0) await groupRun(1, Math.min(WARMUP, GROUP_CHILDREN), 1, 2_000_000);
    const groupLogStart = new Map(logCounts);
    const groups = await groupRun(GROUPS, GROUP_CHILDREN, GROUP_CONCURRENCY, 3_000_000);
    const groupLogCounts = new Map(
      [...logCounts]
        .map(([k, v]): [string, number] => [k, v - (groupLogStart.get(k) ?? 0)])
        .filter(([, v]) => v > 0),
    );
    return { ...single, groups, groupLogCounts };
  } finally {
    await stack.stop();
  }
}

type Run = Awaited<ReturnType<typeof run>>;

function analyse(r: Run) {
  const { snap, items, t0, enqueueCallMs } = r;
  const n = items.length;
  const lastDone = Math.max(...items.map((i) => i.finishedAt ?? 0));
  const jobsPerSecond = n / ((lastDone - t0) / 1000);
  const latencies = items.map((i) => (i.startedAt ?? Number.NaN) - i.createdAt).sort((a, b) => a - b);
  const itemBytes = items.map((i) => JSON.stringify(i).length).sort((a, b) => a - b);

  const metered = meteredUsage(snap, {
    callMs: enqueueCallMs,
    assumedMs: enqueueCallMs.map(() => ASSUMED_ENQUEUE_CALL_MS),
  });
  const { usage, cost, variants } = costPerUnit(metered, n);

  return { n, jobsPerSecond, latencies, itemBytes, ...metered, usage, cost, variants };
}

export type Analysis = ReturnType<typeof analyse>;

const result = await run();
const analysis = analyse(result);
// After the stack has stopped, so the emulators don't compete with the process starts for the CPU.
const budgets = await measureBudgets();
printTable(analysis, result.snap, budgets, result.logCounts);
const n = analysis.n;
const groupAnalysis = analyseGroups(result.groups, {
  writesPerJob: analysis.ddbWrite.requests / n,
  wcuPerJob: analysis.wcu / n,
});
printGroupTable(groupAnalysis, result.groupLogCounts);
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
    group: groupJson(groupAnalysis),
  }),
);
