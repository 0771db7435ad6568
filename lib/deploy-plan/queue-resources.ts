/**
 * What the dashboard and alarm builders need to know about deployed resources. Physical names are
 * Pulumi Outputs in infra, so they are typed `S`: the builders only place them into objects and
 * arrays (infra wraps the result in `$jsonStringify`, which resolves nested Outputs), and never
 * concatenate, compare or inspect them.
 */
export interface QueueResources<S = string> {
  /** The declared queue name: the EMF `queue` dimension, and the source of resource ids and titles. */
  name: string;
  tier: "lambda" | "pool";
  /** AWS/SQS `QueueName` of the main queue. */
  sqsName: S;
  /** AWS/SQS `QueueName` of its dead-letter queue. */
  dlqSqsName: S;
  /** AWS/Lambda `FunctionName` of the worker; only Lambda-tier queues have one. */
  workerFunctionName?: S;
}

/** The one Fargate service that serves every pool-tier queue. */
export interface PoolResources<S = string> {
  clusterName: S;
  serviceName: S;
  /** The pool's kinds and the queue each feeds from (app/pool-kinds.ts). */
  kinds: readonly { name: string; queue: string }[];
}
