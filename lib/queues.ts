import type { BackoffPolicy } from "./job/kind.ts";

/** Who consumes a queue: a Lambda worker per queue, or the Fargate pool's warm child processes. */
export type QueueTier = "lambda" | "pool";

/** One SQS queue + DLQ + consumer. Infra and the local stack both read these declarations. */
export interface QueueDeclaration {
  name: string;
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

export const queues: readonly QueueDeclaration[] = [
  {
    name: "default",
    batchSize: 10,
    batchWindowSeconds: 1,
    maxConcurrency: 10,
    recordConcurrency: 10,
    workerTimeoutSeconds: 900,
    leaseSeconds: 30,
    backoff: { baseSeconds: 2, maxSeconds: 3600 },
    retentionDays: { done: 7, dead: 30 },
    maxReceiveCount: 120,
  },
  {
    // Heavy kinds (lib/pool/pool-kinds.ts), served by warm child processes on Fargate. The pool reads
    // batchSize (messages per receive, also capped by free children), lease, backoff, retention and
    // redrive; workerTimeoutSeconds bounds the longest pool job. The Lambda-only fields (batch
    // window, concurrency) are unused here.
    name: "heavy",
    tier: "pool",
    batchSize: 10,
    batchWindowSeconds: 20,
    maxConcurrency: 2,
    recordConcurrency: 10,
    workerTimeoutSeconds: 900,
    leaseSeconds: 30,
    backoff: { baseSeconds: 5, maxSeconds: 3600 },
    retentionDays: { done: 7, dead: 30 },
    maxReceiveCount: 120,
  },
];

export function tierOf(q: QueueDeclaration): QueueTier {
  return q.tier ?? "lambda";
}

export function visibilityTimeoutSeconds(q: QueueDeclaration): number {
  return Math.min(6 * q.workerTimeoutSeconds, 12 * 3600);
}

export function queueByName(list: readonly QueueDeclaration[], name: string): QueueDeclaration | undefined {
  return list.find((q) => q.name === name);
}
