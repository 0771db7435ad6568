import { ChangeMessageVisibilityBatchCommand, ReceiveMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import { mockClient } from "aws-sdk-client-mock";
import { afterAll, afterEach, expect, test } from "vitest";
import type { Log } from "../../lib/observability/log.ts";
import { EventSourcePoller } from "../../local/event-source-poller.ts";
import { waitFor } from "../support/wait.ts";

/**
 * A batch that arrives after the local event source was paused is handed straight back. SQS (or the
 * emulator) can refuse an entry of that hand-back; such a message would stay hidden for the queue's
 * whole visibility timeout, so it is tried once more and, if refused again, logged.
 */
const sqs = mockClient(SQSClient);
// The mocks patch the SDK classes themselves: put them back for the files that share this worker.
afterAll(() => {
  sqs.restore();
});
afterEach(() => sqs.reset());

const messages = [
  { MessageId: "m0", ReceiptHandle: "rh0", Body: "{}" },
  { MessageId: "m1", ReceiptHandle: "rh1", Body: "{}" },
];

function pausedDuringThePoll(errors: string[]): EventSourcePoller {
  const log: Log = { debug() {}, info() {}, warn() {}, error: (m) => void errors.push(m) };
  const poller = new EventSourcePoller(new SQSClient({ region: "us-east-1" }), {
    queueName: "default",
    queueUrl: "http://127.0.0.1:1/000000000000/default",
    queueArn: "arn:aws:sqs:us-east-1:000000000000:default",
    batchSize: 10,
    batchWindowSeconds: 1,
    leaseSeconds: 30,
    maxConcurrency: 1,
    handler: async () => ({ batchItemFailures: [] }),
    log,
  });
  sqs.on(ReceiveMessageCommand).callsFakeOnce(() => {
    poller.configure({ enabled: false, maxConcurrency: 1 });
    return { Messages: messages };
  });
  return poller;
}

const handedBack = () =>
  sqs
    .commandCalls(ChangeMessageVisibilityBatchCommand)
    .map((c) => c.args[0].input.Entries?.map((e) => e.ReceiptHandle));

test("an entry refused on hand-back is tried once more", async () => {
  sqs
    .on(ChangeMessageVisibilityBatchCommand)
    .resolvesOnce({ Failed: [{ Id: "1", Code: "ReceiptHandleIsInvalid", SenderFault: true }] })
    .resolvesOnce({});
  const errors: string[] = [];
  const poller = pausedDuringThePoll(errors);
  poller.start();
  await waitFor(async () => handedBack().length === 2, "the retry of the refused entry");
  await poller.stop();
  expect(handedBack()).toEqual([["rh0", "rh1"], ["rh1"]]);
  expect(errors).toEqual([]);
});

test("an entry refused twice is logged, not dropped silently", async () => {
  sqs
    .on(ChangeMessageVisibilityBatchCommand)
    .resolves({ Failed: [{ Id: "0", Code: "InternalError", SenderFault: false }] });
  const errors: string[] = [];
  const poller = pausedDuringThePoll(errors);
  poller.start();
  await waitFor(async () => errors.length === 1, "the error log");
  await poller.stop();
  expect(handedBack()).toEqual([["rh0", "rh1"], ["rh0"]]);
  expect(errors[0]).toMatch(/could not hand paused messages back/);
});
