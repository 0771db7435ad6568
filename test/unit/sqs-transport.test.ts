import { SendMessageBatchCommand, type SendMessageBatchCommandInput } from "@aws-sdk/client-sqs";
import { mockClient } from "aws-sdk-client-mock";
import { afterEach, describe, expect, it } from "vitest";
import type { JobMessage } from "../../lib/transport/job-message.ts";
import { type OutgoingJob, SqsTransport } from "../../lib/transport/sqs-transport.ts";
import { newSqsClient, queueUrls } from "./aws-mocks.ts";

const sqs = newSqsClient();
const mock = mockClient(sqs);
afterEach(() => mock.reset());

function job(id: string, payloadBytes: number): OutgoingJob {
  const message: JobMessage = {
    v: 1,
    id,
    kind: "echo",
    queue: "default",
    maxAttempts: 3,
    priority: "normal",
    createdAt: 0,
    runAt: 0,
    payload: JSON.stringify("x".repeat(payloadBytes)),
  };
  return { message, delaySeconds: 0 };
}

const sentBatches = () =>
  mock
    .commandCalls(SendMessageBatchCommand)
    .map((c) => (c.args[0].input as SendMessageBatchCommandInput).Entries ?? []);

describe("SqsTransport.sendBatch", () => {
  it("sends ten small messages per request", async () => {
    mock.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });
    const failed = await new SqsTransport(sqs, queueUrls).sendBatch(
      Array.from({ length: 25 }, (_, i) => job(`j${i}`, 100)),
    );
    expect(failed.size).toBe(0);
    expect(sentBatches().map((entries) => entries.length)).toEqual([10, 10, 5]);
  });

  it("never puts more than SQS's batch size in bytes into one request", async () => {
    mock.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });
    // Three 120 KB messages: two fit under the 256 KB batch limit together, three don't.
    await new SqsTransport(sqs, queueUrls).sendBatch([
      job("a", 120_000),
      job("b", 120_000),
      job("c", 120_000),
    ]);
    const batches = sentBatches();
    expect(batches.map((entries) => entries.map((e) => e.Id))).toEqual([["a", "b"], ["c"]]);
    for (const entries of batches) {
      const bytes = entries.reduce((sum, e) => sum + Buffer.byteLength(e.MessageBody ?? ""), 0);
      expect(bytes).toBeLessThanOrEqual(256 * 1024);
    }
  });

  it("reports every job of a refused request, and only those, as failed", async () => {
    mock
      .on(SendMessageBatchCommand)
      .rejectsOnce(new Error("batch too big"))
      .resolves({ Successful: [], Failed: [{ Id: "j12", Code: "InternalError", SenderFault: false }] });
    const failed = await new SqsTransport(sqs, queueUrls).sendBatch(
      Array.from({ length: 15 }, (_, i) => job(`j${i}`, 10)),
    );
    expect([...failed].sort()).toEqual([...Array.from({ length: 10 }, (_, i) => `j${i}`), "j12"].sort());
  });
});
