import type { SQSEvent } from "aws-lambda";
import { queueWorker } from "../lib/handlers/worker.ts";
import { engineFromEnv, workerQueueFromEnv } from "./runtime-config.ts";

const queueName = workerQueueFromEnv();
const { engine } = engineFromEnv("skyforge-worker");
const worker = queueWorker(engine, queueName);

/** SQS event source (partial batch responses on). */
export const handler = (event: SQSEvent) => worker(event);
