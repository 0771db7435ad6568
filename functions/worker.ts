import type { SQSEvent } from "aws-lambda";
import { createWorker } from "../lib/runtime/worker.ts";
import { engineFromEnv } from "./runtime-config.ts";

const { engine } = engineFromEnv("skyforge-worker");
const queueName = process.env.SKYFORGE_WORKER_QUEUE;
if (!queueName) throw new Error("SKYFORGE_WORKER_QUEUE is not set");
const declaration = engine.queues.find((q) => q.name === queueName);
if (!declaration) throw new Error(`SKYFORGE_WORKER_QUEUE names an undeclared queue: ${queueName}`);
const worker = createWorker(engine, { recordConcurrency: declaration.recordConcurrency });

/** SQS event source (partial batch responses on). */
export const handler = (event: SQSEvent) => worker(event);
