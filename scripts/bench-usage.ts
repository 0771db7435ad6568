import {
  claimStorageUsdPerMillion,
  estimateCost,
  type JobUsage,
  lambdaGbSeconds,
} from "../bench/cost-estimate.ts";
import {
  DYNAMODB_READ_OPERATIONS,
  DYNAMODB_WRITE_OPERATIONS,
  type MeterSnapshot,
  sumStats,
} from "../bench/request-meter.ts";
import {
  ASSUMED_WORKER_BATCH_MS,
  DURATION_MODE,
  ENQUEUE_MEMORY_MB,
  mean,
  WORKER_MEMORY_MB,
} from "./bench-config.ts";

/**
 * What a metered window used, in billable units, and its price per unit of work (a job, a group's
 * child): every scenario of `npm run bench` is priced by these same rules.
 */

/** The enqueue-side invocations of a window: their measured wall times and the durations assumed on AWS. */
export interface EnqueueCalls {
  callMs: readonly number[];
  assumedMs: readonly number[];
}

/**
 * `workerInvocations`: counted by the event source when it knows them; else each receive that
 * returned messages is one invocation (true of batches of up to 10, one receive each).
 */
export function meteredUsage(snap: MeterSnapshot, enqueue: EnqueueCalls, workerInvocationsCounted?: number) {
  const ops = snap.operations;
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
  const s3Puts = ops["s3:PutObject"]?.requests ?? 0;
  const s3Gets = ops["s3:GetObject"]?.requests ?? 0;
  const storedByteDays = ops["s3:PutObject"]?.storedByteDays ?? 0;
  const emulatorRereads = Math.min(ops["dynamodb:GetItem"]?.unmetered ?? 0, ddbWrite.conditionalFailures);

  const workerInvocations = workerInvocationsCounted ?? receive?.nonEmptyReceives ?? 0;
  const enqueueInvocations = enqueue.callMs.length;
  const batchMs = [...snap.batchDurationsMs].sort((a, b) => a - b);
  const enqueueGbs = (durations: readonly number[]) =>
    durations.reduce((sum, ms) => sum + lambdaGbSeconds(ENQUEUE_MEMORY_MB, ms), 0);
  const gbs = {
    measured:
      batchMs.reduce((sum, ms) => sum + lambdaGbSeconds(WORKER_MEMORY_MB, ms), 0) +
      Math.max(0, workerInvocations - batchMs.length) * lambdaGbSeconds(WORKER_MEMORY_MB, mean(batchMs)) +
      enqueueGbs(enqueue.callMs),
    assumed:
      workerInvocations * lambdaGbSeconds(WORKER_MEMORY_MB, ASSUMED_WORKER_BATCH_MS) +
      enqueueGbs(enqueue.assumedMs),
  };
  return {
    emptyReceives,
    sqsRequests,
    sqsBilled,
    ddbWrite,
    ddbRead,
    ddbOther,
    wcu,
    rcu,
    emulatorRereads,
    s3Puts,
    s3Gets,
    storedByteDays,
    workerInvocations,
    enqueueInvocations,
    batchMs,
    enqueueCallMs: [...enqueue.callMs].sort((a, b) => a - b),
    gbs,
    windowSeconds: snap.elapsedMs / 1000,
  };
}

export type MeteredUsage = ReturnType<typeof meteredUsage>;

/** The window's usage shared over `n` units of work, priced: the headline and every variant. */
export function costPerUnit(m: MeteredUsage, n: number) {
  const usageFor = (mode: "assumed" | "measured", withRereads: boolean): JobUsage => ({
    sqsRequests: m.sqsBilled / n,
    dynamodbWriteUnits: m.wcu / n,
    dynamodbReadUnits: (m.rcu - (withRereads ? 0 : m.emulatorRereads)) / n,
    lambdaInvocations: (m.workerInvocations + m.enqueueInvocations) / n,
    lambdaGbSeconds: m.gbs[mode] / n,
    s3Puts: m.s3Puts / n,
    s3Gets: m.s3Gets / n,
  });
  const usage = usageFor(DURATION_MODE, true);
  return {
    usage,
    cost: estimateCost(usage),
    claimStorageUsdPerMillion: claimStorageUsdPerMillion(m.storedByteDays / n),
    variants: {
      assumed: {
        asCounted: estimateCost(usageFor("assumed", true)),
        awsLike: estimateCost(usageFor("assumed", false)),
      },
      measured: {
        asCounted: estimateCost(usageFor("measured", true)),
        awsLike: estimateCost(usageFor("measured", false)),
      },
    },
  };
}
