import { ReceiveMessageCommand, SendMessageCommand } from "@aws-sdk/client-sqs";
import { expect, it } from "vitest";
import type { QueueDeclaration } from "../../lib/declarations/queue-declaration.ts";
import { silentLog } from "../../lib/observability/log.ts";
import { EventSourcePoller } from "../../local/event-source-poller.ts";
import { queueForFile } from "../support/sqs-queue.ts";
import { defaultQueue } from "../support/test-app.ts";
import { deferred, waitFor } from "../support/wait.ts";

/**
 * A reload (local/live-app.ts) replaces a queue's poller with a new one. The old one's long poll is
 * in flight: cut, the emulator may still hand the next message to the poll it registered, hidden
 * from the new poller for the receive's visibility (here 5 + 31 s; seen in test/e2e/skyforge-dev).
 * Retired instead, the poll ends by itself and what it brings is handed back at once, for the new
 * poller; the old handler runs none of it.
 */
const declared: QueueDeclaration = { ...defaultQueue, name: "retire", batchSize: 1, batchWindowSeconds: 5 };
const fileQueue = queueForFile(declared, "retire");

it("a retired poller's receive in flight hands its message back at once, unrun", async () => {
  const { sqs, queue } = fileQueue();
  /** The poller's first receive: sent, then how it ended (its message count, or its error's name). */
  const polling = deferred();
  const firstReceive = deferred<number | string>();
  sqs.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName !== "ReceiveMessageCommand") return next(args);
      polling.resolve();
      try {
        const out = await next(args);
        firstReceive.resolve((out.output as { Messages?: unknown[] }).Messages?.length ?? 0);
        return out;
      } catch (err) {
        firstReceive.resolve((err as Error).name);
        throw err;
      }
    },
    { step: "finalizeRequest", name: "retire-test-receives" },
  );
  const ran: string[] = [];
  const poller = new EventSourcePoller(sqs, {
    queueName: declared.name,
    queueUrl: queue.url,
    queueArn: "arn:aws:sqs:us-east-1:000000000000:retire",
    batchSize: declared.batchSize,
    batchWindowSeconds: declared.batchWindowSeconds,
    leaseSeconds: declared.leaseSeconds,
    maxConcurrency: 1,
    handler: async (event) => {
      ran.push(...event.Records.map((r) => r.messageId));
      return { batchItemFailures: [] };
    },
    log: silentLog,
  });
  try {
    poller.start();
    await polling.promise;
    const retired = poller.retire();
    const sent = await sqs.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: "{}" }));
    await retired;
    sqs.middlewareStack.remove("retire-test-receives");
    // The poll in flight was left to end: it brought the message (cut, it would have been an AbortError).
    expect(await firstReceive.promise).toBe(1);

    // Back within the test's bound, not after the receive's visibility: a 1 s long poll or two.
    const back = await waitFor(
      async () => {
        const out = await sqs.send(
          new ReceiveMessageCommand({ QueueUrl: queue.url, MaxNumberOfMessages: 1, WaitTimeSeconds: 1 }),
        );
        return out.Messages?.[0];
      },
      "the message handed back",
      3_000,
    );
    expect(back.MessageId).toBe(sent.MessageId);
    expect(ran).toEqual([]);
  } finally {
    await poller.stop();
  }
});
