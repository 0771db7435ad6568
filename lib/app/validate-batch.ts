import { batchPolicies } from "../batching/key-batches.ts";
import { type BatchSettings, MAX_LAMBDA_BATCH_SIZE, MAX_LAMBDA_BATCH_WAIT_SECONDS } from "../job/batch.ts";
import type { QueueDeclaration } from "./queue-declaration.ts";

const isInt = (v: unknown): v is number => Number.isInteger(v);

/**
 * A Lambda-tier batch kind's settings against what its tier allows (docs/architecture.md §18): the
 * event source hands a worker at most its queue's batchSize records, gathered for at most the queue's
 * batchWindowSeconds, so a call can't take more items than that, nor wait longer.
 */
export function batchKindProblems(
  label: string,
  settings: BatchSettings,
  lane: string | undefined,
  queue: QueueDeclaration | undefined,
): string[] {
  const problems: string[] = [];
  const { maxSize, maxWaitSeconds, policy, maxKeyConcurrency, maxPendingPerKey } = settings;
  if (!isInt(maxSize) || maxSize < 1 || maxSize > MAX_LAMBDA_BATCH_SIZE)
    problems.push(
      `${label}: batch maxSize ${maxSize} is outside 1..${MAX_LAMBDA_BATCH_SIZE} (the Lambda tier)`,
    );
  else if (queue && maxSize > queue.batchSize)
    problems.push(
      `${label}: batch maxSize ${maxSize} is over queue "${queue.name}"'s batchSize ${queue.batchSize}: one invocation never carries more`,
    );
  if (!(maxWaitSeconds >= 0) || maxWaitSeconds > MAX_LAMBDA_BATCH_WAIT_SECONDS)
    problems.push(
      `${label}: batch maxWaitSeconds ${maxWaitSeconds} is outside 0..${MAX_LAMBDA_BATCH_WAIT_SECONDS} (the event source's batching window)`,
    );
  else if (queue && maxWaitSeconds > queue.batchWindowSeconds)
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
