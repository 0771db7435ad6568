import { ConfigError } from "../errors.ts";
import { createWorker } from "../runtime/worker.ts";
import type { Engine } from "../services/engine-services.ts";
import type { RunStamp } from "../store/lease-ops.ts";

/** What a run stamp reads of Lambda's invocation context. */
export interface InvocationContext {
  awsRequestId: string;
  getRemainingTimeInMillis(): number;
}

/**
 * A Lambda worker's claims name their run: the function and the request id (the id Lambda's own
 * "Task timed out" and "Runtime exited" log lines carry) and when Lambda stops the invocation, so
 * a takeover can tell a timeout from any other stop (docs/architecture.md §21).
 */
export function lambdaRunStamp(
  functionName: string,
  invocation: InvocationContext | undefined,
  now: number,
): RunStamp {
  if (!invocation) return { runner: `lambda:${functionName}` };
  return {
    runner: `lambda:${functionName}/${invocation.awsRequestId}`,
    deadline: now + invocation.getRemainingTimeInMillis(),
  };
}

/** The SQS worker of one declared queue; a ConfigError for a queue the app doesn't declare. */
export function queueWorker(engine: Engine, queueName: string) {
  const declaration = engine.queues.find((q) => q.name === queueName);
  if (!declaration) throw new ConfigError(`no queue named "${queueName}" is declared`);
  return createWorker(engine, { recordConcurrency: declaration.recordConcurrency });
}
