import type { BackoffPolicy } from "../job/kind.ts";
import { MAX_VISIBILITY_SECONDS } from "../limits.ts";

/** The range of Lambda event source maximum concurrency (a queue's maxConcurrency). */
export const MIN_CONCURRENCY = 2;
export const MAX_CONCURRENCY = 1000;

/** Who consumes a queue: a Lambda worker per queue, or the Fargate pool's warm child processes. */
export type QueueTier = "lambda" | "pool";

/** One SQS queue + DLQ + consumer, declared in the app. Infra and the local stack both read it. */
export interface QueueDeclaration<Name extends string = string> {
  name: Name;
  /** Defaults to "lambda". A pool queue has no Lambda worker; the pool process long-polls it. */
  tier?: QueueTier;
  /** Records per worker invocation (SQS ReceiveMessage caps one call at 10). */
  batchSize: number;
  /** How long the event source waits to fill a batch. */
  batchWindowSeconds: number;
  /** ESM maximum concurrency: how many worker invocations run at once (2..1000). */
  maxConcurrency: number;
  /** Records of one batch that run at the same time inside one worker. */
  recordConcurrency: number;
  /** Worker function timeout; queue visibility is 6x this. */
  workerTimeoutSeconds: number;
  /** Lease length; heartbeats renew it every third of it. */
  leaseSeconds: number;
  backoff: BackoffPolicy;
  retentionDays: { done: number; dead: number };
  /** Redrive threshold. Attempts each cost one receive; headroom covers duplicates and takeovers. */
  maxReceiveCount: number;
}

export function tierOf(q: QueueDeclaration): QueueTier {
  return q.tier ?? "lambda";
}

export function visibilityTimeoutSeconds(q: QueueDeclaration): number {
  return Math.min(6 * q.workerTimeoutSeconds, MAX_VISIBILITY_SECONDS);
}
