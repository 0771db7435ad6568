import { ReceiveMessageCommand, SendMessageBatchCommand } from "@aws-sdk/client-sqs";
import type { SQSBatchResponse, SQSEvent } from "aws-lambda";
import { expect, it } from "vitest";
import type { QueueDeclaration } from "../../lib/declarations/queue-declaration.ts";
import { silentLog } from "../../lib/observability/log.ts";
import { EventSourcePoller, receiveVisibilitySeconds } from "../../local/event-source-poller.ts";
import { queueForFile } from "../support/sqs-queue.ts";
import { defaultQueue } from "../support/test-app.ts";
import { deferred } from "../support/wait.ts";

/**
 * Issue 24: a message the local event source received, but that no worker has held yet, comes back
 * within the batching window plus one hold, not after the queue's visibility timeout (here 6 × 900 s).
 * The handler below never gets to hold its records, as a stack killed before the worker's first
 * line: the test's own receive must get every message back within the bound.
 */
const declared: QueueDeclaration = {
  ...defaultQueue,
  name: "gather",
  leaseSeconds: 1,
  batchWindowSeconds: 1,
};

const fileQueue = queueForFile(declared, "esr");

it("messages received but never held come back within the window plus one hold", async () => {
  const { sqs, queue } = fileQueue();
  const bound = receiveVisibilitySeconds(declared);
  expect(bound).toBe(1 + 2);
  const invoked = deferred<SQSEvent>();
  const never = deferred<SQSBatchResponse>();
  const poller = new EventSourcePoller(sqs, {
    queueName: declared.name,
    queueUrl: queue.url,
    queueArn: "arn:aws:sqs:us-east-1:000000000000:gather",
    batchSize: 3,
    batchWindowSeconds: declared.batchWindowSeconds,
    leaseSeconds: declared.leaseSeconds,
    maxConcurrency: 1,
    handler: (event) => {
      invoked.resolve(event);
      return never.promise;
    },
    log: silentLog,
  });
  await sqs.send(
    new SendMessageBatchCommand({
      QueueUrl: queue.url,
      Entries: ["a", "b", "c"].map((id) => ({ Id: id, MessageBody: JSON.stringify({ id }) })),
    }),
  );
  poller.start();
  const event = await invoked.promise;
  const receivedAt = Date.now();
  const ids = event.Records.map((r) => r.messageId).sort();
  expect(ids).toHaveLength(3);

  const back = new Set<string>();
  // Long polls bounded by the promise plus a margin: on the queue's own visibility they would stay away 90 min.
  while (back.size < 3 && Date.now() - receivedAt < (bound + 3) * 1000) {
    const out = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queue.url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
    );
    for (const m of out.Messages ?? []) back.add(m.MessageId as string);
  }
  expect([...back].sort()).toEqual(ids);

  never.resolve({ batchItemFailures: ids.map((itemIdentifier) => ({ itemIdentifier })) });
  await poller.stop();
});
