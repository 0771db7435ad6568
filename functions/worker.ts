import type { Context, SQSEvent } from "aws-lambda";
import { lambdaRunStamp, queueWorker } from "../lib/handlers/worker.ts";
import { engineFromEnv, workerQueueFromEnv } from "./runtime-config.ts";

/** The invocation in progress: a Lambda environment runs one at a time. */
let invocation: Context | undefined;
const functionName = process.env.AWS_LAMBDA_FUNCTION_NAME ?? "worker";

const queueName = workerQueueFromEnv();
const { engine } = engineFromEnv("skyforge-worker", {
  runner: () => lambdaRunStamp(functionName, invocation, Date.now()),
});
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
