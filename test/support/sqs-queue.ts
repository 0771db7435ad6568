import type { SQSClient } from "@aws-sdk/client-sqs";
import type { QueueDeclaration } from "../../lib/declarations/queue-declaration.ts";
import {
  type ProvisionedQueue,
  provisionQueues,
  type RunningEmulator,
  sqsClient,
  startSqsEmulator,
} from "../../local/emulators.ts";
import { forFile } from "./for-file.ts";

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
  return forFile(
    "the queue and its emulator",
    async () => {
      emu = await startSqsEmulator();
      const sqs = sqsClient(emu.endpoint);
      const queue = (await provisionQueues(sqs, [declared], prefix)).get(declared.name) as ProvisionedQueue;
      return { sqs, queue };
    },
    async ({ sqs }) => {
      sqs.destroy();
      await emu?.stop();
    },
  );
}
