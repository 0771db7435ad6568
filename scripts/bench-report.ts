import { FAIL_ONCE_KIND } from "../bench/fail-once-kind.ts";
import type { MeterSnapshot } from "../bench/request-meter.ts";
import type { RunShape } from "./bench-args.ts";
import {
  ASSUMED_ENQUEUE_CALL_MS,
  ASSUMED_WORKER_BATCH_MS,
  BATCH,
  DURATION_MODE,
  ENQUEUE_MEMORY_MB,
  mean,
  percentile,
  round,
  WORKER_MEMORY_MB,
} from "./bench-config.ts";
// Type-only: erased at run time, so loading the report never runs a window.
import type { Analysis } from "./bench-window.ts";
import { type BudgetReport, budgetLines, budgetTitle } from "./cold-start.ts";

/** The human table `npm run bench` prints before its JSON line. */

export function printTable(
  a: Analysis,
  shape: RunShape,
  snap: MeterSnapshot,
  /** The cold-start budget when it was measured beside the window (else its own scenario prints it). */
  budgets: BudgetReport | undefined,
  logCounts: Map<string, number>,
): void {
  const perJob = (x: number) => (x / a.n).toFixed(4);
  const usd = (x: number) => `$${x.toFixed(4)}`;
  const ms = (x: number) => `${x.toFixed(1)} ms`;
  const kindNotes = [
    ...(shape.failOnce
      ? [`run as ${FAIL_ONCE_KIND}: each job fails its first attempt, succeeds on the next`]
      : []),
    ...(shape.unique ? ["each job with its own uniqueKey"] : []),
  ];
  const rows: [string, string][] = [
    ["kind", [shape.kind, ...kindNotes].join("; ")],
    ["lane", `${shape.lane}  (declared on the bench's copy of the kind)`],
    ["payloadBytes", `${shape.payloadBytes}  (each job's payload, serialized JSON)`],
    [
      "jobs (measured window)",
      `${a.n} ${shape.kind}, ${shape.payloadBytes}-byte payloads, ${a.enqueueInvocations} enqueueBatch calls of ≤${BATCH}`,
    ],
    [
      "jobsPerSecond",
      `${a.jobsPerSecond.toFixed(1)}  (first enqueue → ${a.itemBytes.length === a.n ? "last finishedAt" : "the bench saw the queue drained"})`,
    ],
    [
      "latencyMs p50 / p99",
      a.latencies.length > 0
        ? `${percentile(a.latencies, 50)} / ${percentile(a.latencies, 99)}  (createdAt → startedAt)`
        : `n/a  (no job items to read them from: the ${shape.lane} lane keeps none of a success)`,
    ],
    [
      "requestsPerJob sqs",
      `${perJob(a.sqsRequests)}  (billed in 64 KB chunks: ${perJob(a.sqsBilled)}; idle polls excluded)`,
    ],
    ["requestsPerJob dynamodbWrite", perJob(a.ddbWrite.requests)],
    ["requestsPerJob dynamodbRead", perJob(a.ddbRead.requests)],
    [
      "requestsPerJob s3",
      `${perJob(a.s3Puts + a.s3Gets)}  (claims bucket: ${a.s3Puts} PUT + ${a.s3Gets} GET)`,
    ],
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
    ["  s3 requests", usd(a.cost.breakdown.s3Requests)],
    [
      "claim storage per M jobs",
      `${usd(a.claimStorageUsdPerMillion)}  (S3 Standard for each object's lifecycle class; not in the figure above, like the table's storage)`,
    ],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  const path = shape.lane === "fenced" ? "default fenced-claim path" : `${shape.lane} lane`;
  console.log(`skyforge bench: ${path}, local stack (dynalite + fauxqs)`);
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

  if (budgets) {
    console.log(`\n  ${budgetTitle}`);
    for (const line of budgetLines(budgets)) console.log(`  ${line}`);
  }

  const notes = [
    `idle polling: ${a.emptyReceives} empty ReceiveMessage long polls in the ${a.windowSeconds.toFixed(1)} s window (${(a.emptyReceives / a.windowSeconds).toFixed(1)}/s) are left out of the per-job figures: Lambda's SQS event source long-polls an idle queue just the same, so they are a fixed cost per queue, not per job.`,
    `lambda duration (${DURATION_MODE} in the headline): assumed = ${WORKER_MEMORY_MB} MB × ${ASSUMED_WORKER_BATCH_MS} ms per worker batch and ${ENQUEUE_MEMORY_MB} MB × ${ASSUMED_ENQUEUE_CALL_MS} ms per enqueue call. Measured locally (loopback emulators on this process's CPU): worker batch = ReceiveMessage response → DeleteMessageBatch request, matched by receipt handle, ${a.batchMs.length} batches, p50 ${ms(percentile(a.batchMs, 50))}, mean ${ms(mean(a.batchMs))}, p99 ${ms(percentile(a.batchMs, 99))}; enqueue call = enqueueBatch wall time, p50 ${ms(percentile(a.enqueueCallMs, 50))}, mean ${ms(mean(a.enqueueCallMs))}. Each invocation is rounded up to 1 ms.`,
    `lambda requests: worker invocations = ReceiveMessage responses with ≥ 1 message (${(a.workerInvocations ? a.n / a.workerInvocations : 0).toFixed(1)} jobs each); enqueue invocations = one per enqueueBatch call (the bench calls the producer as the enqueue function would).`,
    `unmetered DynamoDB requests are charged at the least AWS would bill: 1 WCU per failed conditional write, 1 RCU per strongly consistent read (0.5 eventually consistent) of an item ≤ 4 KB. ${a.ddbWrite.conditionalFailures} conditional writes failed; ${a.emulatorRereads} of the unmetered GetItems are the store's re-read after a lost condition, which AWS makes unnecessary (it returns the item with the error) — the right-hand column drops them.`,
    a.itemBytes.length > 0
      ? `job item size when done (attribute names + values, JSON): p50 ${percentile(a.itemBytes, 50)} B, max ${a.itemBytes.at(-1)} B; dynalite bills WCU by item size like DynamoDB but ignores GSI writes (none on this path).`
      : `no job items after the run (the ${shape.lane} lane writes none on success); jobsPerSecond runs to when the bench saw every job succeeded and its message deleted.`,
    `dynamodb control plane in the window: ${a.ddbOther.requests} requests.`,
  ];
  for (const [message, count] of logCounts) notes.push(`stack log in the window: ${count} × ${message}`);
  console.log("\n  notes");
  for (const note of notes) console.log(`  - ${note}`);
}
