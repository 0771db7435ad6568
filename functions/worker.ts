import type { Context, SQSEvent } from "aws-lambda";
import { queueWorker } from "../lib/handlers/worker.ts";
import type { RunStamp } from "../lib/store/lease-ops.ts";
import { engineFromEnv, workerQueueFromEnv } from "./runtime-config.ts";

/** The invocation in progress: a Lambda environment runs one at a time. */
let invocation: Context | undefined;

/**
 * Each claim names its run (function and request id: the id Lambda's own "Task timed out" and
 * "Runtime exited" lines carry) and when Lambda stops it, so a takeover can tell a timeout from
 * any other stop (docs/architecture.md §21).
 */
function runStamp(): RunStamp {
  const name = process.env.AWS_LAMBDA_FUNCTION_NAME ?? "worker";
  if (!invocation) return { runner: `lambda:${name}` };
  return {
    runner: `lambda:${name}/${invocation.awsRequestId}`,
    deadline: Date.now() + invocation.getRemainingTimeInMillis(),
  };
}

const queueName = workerQueueFromEnv();
const { engine } = engineFromEnv("skyforge-worker", { runner: runStamp });
const worker = queueWorker(engine, queueName);

/** SQS event source (partial batch responses on). */
export const handler = async (event: SQSEvent, context?: Context) => {
  invocation = context;
  try {
    return await worker(event);
  } finally {
    invocation = undefined;
  }
};
