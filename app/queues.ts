import { defineQueues } from "../lib/declarations/define-app.ts";

/**
 * The app's queues: one SQS queue + DLQ + consumer each. Adding a queue is one entry here; infra
 * and the local stack create it, and kinds may name it.
 */
export const queues = defineQueues([
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
    // Batch kinds (app/kinds/batch-echo.ts): the event source gathers up to 50 records for up to
    // 2 s, and the worker runs each key's records as one handler call.
    name: "batch",
    batchSize: 50,
    batchWindowSeconds: 2,
    maxConcurrency: 5,
    recordConcurrency: 10,
    workerTimeoutSeconds: 300,
    leaseSeconds: 30,
    backoff: { baseSeconds: 2, maxSeconds: 600 },
    retentionDays: { done: 7, dead: 30 },
    maxReceiveCount: 120,
  },
  {
    // Heavy kinds (app/pool-kinds.ts), served by warm child processes on Fargate. The pool reads
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
]);
