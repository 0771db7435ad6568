import { ReceiveMessageCommand, SendMessageBatchCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { beforeAll, describe, expect, it } from "vitest";
import { SqsTransport } from "../../lib/transport/sqs-transport.ts";
import type { ProvisionedQueue } from "../../local/emulators.ts";
import { queueForFile } from "../support/sqs-queue.ts";
import { defaultQueue } from "../support/test-app.ts";

// SqsTransport.changeVisibilityBatch on fauxqs: ten entries per request, SQS's per-entry refusals
// reported by the caller's ids, and the visibility it sets is the one SQS keeps.

const fileQueue = queueForFile({ ...defaultQueue, name: "vis" }, "vb");
let sqs: SQSClient;
let queue: ProvisionedQueue;
let transport: SqsTransport;
const sent = new Map<string, number>();

beforeAll(() => {
  ({ sqs, queue } = fileQueue());
  sqs.middlewareStack.add(
    (next, context) => async (args) => {
      const name = String(context.commandName);
      sent.set(name, (sent.get(name) ?? 0) + 1);
      return next(args);
    },
    { step: "initialize", name: "countRequests" },
  );
  transport = new SqsTransport(sqs, new Map([["vis", queue.url]]));
});

async function receiveUpTo(n: number, waitSeconds: number) {
  const all = [];
  while (all.length < n) {
    const out = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queue.url,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: waitSeconds,
      }),
    );
    if (!out.Messages?.length) break;
    all.push(...out.Messages);
  }
  return all;
}

describe("SqsTransport.changeVisibilityBatch", () => {
  it("sets every message's visibility ten per request and reports the entries SQS refused", async () => {
    for (const start of [0, 10]) {
      await sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: queue.url,
          Entries: Array.from({ length: start === 0 ? 10 : 2 }, (_, i) => ({
            Id: `m${start + i}`,
            MessageBody: `body ${start + i}`,
          })),
        }),
      );
    }
    const received = await receiveUpTo(12, 1);
    expect(received).toHaveLength(12);
    sent.clear();
    const failures = await transport.changeVisibilityBatch("vis", [
      ...received.map((m) => ({
        id: m.MessageId as string,
        receiptHandle: m.ReceiptHandle as string,
        seconds: 0,
      })),
      { id: "stale", receiptHandle: "not-a-receipt-handle", seconds: 0 },
    ]);
    expect(sent.get("ChangeMessageVisibilityBatchCommand")).toBe(2);
    expect(failures).toEqual([{ id: "stale", code: "ReceiptHandleIsInvalid", message: expect.any(String) }]);
    // Visibility 0: all twelve are back at once.
    const again = await receiveUpTo(12, 0);
    expect(again.map((m) => m.Body).sort()).toEqual(received.map((m) => m.Body).sort());

    // And the seconds given are the ones SQS keeps: hidden now, all back once 1 s has passed (the
    // queue's own visibility is 90 minutes, so only the change can bring them back).
    expect(
      await transport.changeVisibilityBatch(
        "vis",
        again.map((m) => ({
          id: m.MessageId as string,
          receiptHandle: m.ReceiptHandle as string,
          seconds: 1,
        })),
      ),
    ).toEqual([]);
    expect(await receiveUpTo(1, 0)).toHaveLength(0);
    const back = await receiveUpTo(12, 5);
    expect(back.map((m) => m.Body).sort()).toEqual(received.map((m) => m.Body).sort());
  });

  it("reports every entry of a request that failed as a whole", async () => {
    const broken = new SqsTransport(sqs, new Map([["vis", `${queue.url}-missing`]]));
    const failures = await broken.changeVisibilityBatch("vis", [
      { id: "a", receiptHandle: "x", seconds: 5 },
      { id: "b", receiptHandle: "y", seconds: 5 },
    ]);
    expect(failures.map((f) => f.id)).toEqual(["a", "b"]);
    expect(failures[0]?.code).toMatch(/QueueDoesNotExist|NonExistentQueue/);
  });
});
