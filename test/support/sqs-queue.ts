import type { SQSClient } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll } from "vitest";
import type { QueueDeclaration } from "../../lib/declarations/queue-declaration.ts";
import {
  type ProvisionedQueue,
  provisionQueues,
  type RunningEmulator,
  sqsClient,
  startSqsEmulator,
} from "../../local/emulators.ts";

export interface FileQueue {
  sqs: SQSClient;
  queue: ProvisionedQueue;
}

/**
 * One queue (and its DLQ) for the whole file, on an SQS emulator alone: for the tests of the SQS side
 * only, which need no table. Started before the file's first test, stopped after its last.
 */
export function queueForFile(declared: QueueDeclaration, prefix: string): () => FileQueue {
  let emu: RunningEmulator | undefined;
  let fileQueue: FileQueue | undefined;
  beforeAll(async () => {
    emu = await startSqsEmulator();
    const sqs = sqsClient(emu.endpoint);
    const queue = (await provisionQueues(sqs, [declared], prefix)).get(declared.name) as ProvisionedQueue;
    fileQueue = { sqs, queue };
  });
  afterAll(async () => {
    fileQueue?.sqs.destroy();
    await emu?.stop();
  });
  return () => {
    if (!fileQueue) throw new Error("the queue is made in beforeAll: ask for it inside a test or hook");
    return fileQueue;
  };
}
