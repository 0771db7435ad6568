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
  /** Worker function timeout; the queue's visibility covers it, the batching window and an init. */
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

/** Lambda cuts an on-demand function's init phase at 10 s; a received batch waits through it. */
export const LAMBDA_INIT_SECONDS = 10;

/**
 * What a queue's visibility must cover before a worker's first line can hold its messages: the
 * batching window the event source gathers in, the function's init and the whole invocation (Lambda
 * refuses a mapping whose function timeout exceeds the visibility). Not AWS's advised 6 × the
 * timeout: the fenced lane's hold takes over within the first line anyway, so that margin would only
 * keep the messages of a worker that died before its first line hidden for five more timeouts
 * (docs/architecture.md §6, "The crash window").
 */
export function minimumVisibilitySeconds(q: QueueDeclaration): number {
  return q.workerTimeoutSeconds + Math.ceil(q.batchWindowSeconds) + LAMBDA_INIT_SECONDS;
}

export function visibilityTimeoutSeconds(q: QueueDeclaration): number {
  return Math.min(minimumVisibilitySeconds(q), MAX_VISIBILITY_SECONDS);
}
