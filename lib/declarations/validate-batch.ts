import { batchPolicies } from "../batching/key-batches.ts";
import {
  type BatchSettings,
  MAX_LAMBDA_BATCH_SIZE,
  MAX_LAMBDA_BATCH_WAIT_SECONDS,
  MAX_POOL_BATCH_SIZE,
  MAX_POOL_BATCH_WAIT_SECONDS,
} from "../job/batch.ts";
import { type QueueDeclaration, type QueueTier, tierOf } from "./queue-declaration.ts";

const isInt = (v: unknown): v is number => Number.isInteger(v);

/** What each tier allows a batch kind, and why. */
const TIER_BOUNDS: Record<
  QueueTier,
  { maxSize: number; maxWaitSeconds: number; sizeWhy: string; waitWhy: string }
> = {
  lambda: {
    maxSize: MAX_LAMBDA_BATCH_SIZE,
    maxWaitSeconds: MAX_LAMBDA_BATCH_WAIT_SECONDS,
    sizeWhy: "the Lambda tier",
    waitWhy: "the event source's batching window",
  },
  pool: {
    maxSize: MAX_POOL_BATCH_SIZE,
    maxWaitSeconds: MAX_POOL_BATCH_WAIT_SECONDS,
    sizeWhy: "the pool tier",
    waitWhy: "the pool tier: a waiting item stays received",
  },
};

/**
 * A batch kind's settings against what its tier allows (docs/architecture.md §18). On the Lambda
 * tier the event source hands a worker at most its queue's batchSize records, gathered for at most
 * the queue's batchWindowSeconds, so a call can't take more items than that, nor wait longer. The
 * pool gathers across receives, bounded by its own caps.
 */
export function batchKindProblems(
  label: string,
  settings: BatchSettings,
  lane: string | undefined,
  queue: QueueDeclaration | undefined,
  tier: QueueTier,
): string[] {
  const problems: string[] = [];
  const { maxSize, maxWaitSeconds, policy, maxKeyConcurrency, maxPendingPerKey } = settings;
  const bounds = TIER_BOUNDS[tier];
  const gathersInQueue = queue !== undefined && tierOf(queue) === "lambda" && tier === "lambda";
  if (!isInt(maxSize) || maxSize < 1 || maxSize > bounds.maxSize)
    problems.push(`${label}: batch maxSize ${maxSize} is outside 1..${bounds.maxSize} (${bounds.sizeWhy})`);
  else if (gathersInQueue && maxSize > queue.batchSize)
    problems.push(
      `${label}: batch maxSize ${maxSize} is over queue "${queue.name}"'s batchSize ${queue.batchSize}: one invocation never carries more`,
    );
  if (!(maxWaitSeconds >= 0) || maxWaitSeconds > bounds.maxWaitSeconds)
    problems.push(
      `${label}: batch maxWaitSeconds ${maxWaitSeconds} is outside 0..${bounds.maxWaitSeconds} (${bounds.waitWhy})`,
    );
  else if (gathersInQueue && maxWaitSeconds > queue.batchWindowSeconds)
    problems.push(
      `${label}: batch maxWaitSeconds ${maxWaitSeconds} is over queue "${queue.name}"'s batchWindowSeconds ${queue.batchWindowSeconds}, the longest the event source gathers`,
    );
  if (!(batchPolicies as readonly string[]).includes(policy))
    problems.push(`${label}: batch policy "${policy}" is not one of ${batchPolicies.join(", ")}`);
  if (maxKeyConcurrency !== undefined && (!isInt(maxKeyConcurrency) || maxKeyConcurrency < 1))
    problems.push(`${label}: batch maxKeyConcurrency ${maxKeyConcurrency} is under 1`);
  if (maxPendingPerKey !== undefined && (!isInt(maxPendingPerKey) || maxPendingPerKey < 1))
    problems.push(`${label}: batch maxPendingPerKey ${maxPendingPerKey} is under 1`);
  if (lane !== undefined && lane !== "fenced")
    problems.push(`${label}: a batch kind runs fenced; lane "${lane}" is not allowed`);
  return problems;
}
