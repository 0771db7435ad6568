import {
  SendMessageBatchCommand,
  type SendMessageBatchCommandInput,
  SendMessageCommand,
  type SendMessageCommandInput,
} from "@aws-sdk/client-sqs";
import { mockClient } from "aws-sdk-client-mock";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { encodeMessageBody, type JobMessage, parseJobMessage } from "../../lib/transport/job-message.ts";
import type { OutgoingJob } from "../../lib/transport/outgoing-messages.ts";
import { SqsTransport } from "../../lib/transport/sqs-transport.ts";
import { newSqsClient, queueUrls } from "./aws-mocks.ts";

const sqs = newSqsClient();
const mock = mockClient(sqs);
// The mock patches the client it was given: put it back, as every mock of this suite is.
afterAll(() => {
  mock.restore();
});
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

/** Characters some SQS refuses in a body: fauxqs everything past U+FFFD, real SQS U+FFFE, U+FFFF, lone surrogates. */
const refusedSomewhere = ["🚀", "\uFFFE", "\uFFFF", "\uD800", "\uDC00", "é", "\u0000", "\u007F", '"\\'];

function unicodeJob(id: string): OutgoingJob {
  const text = refusedSomewhere.join(" ");
  const message: JobMessage = {
    ...job(id, 1).message,
    uniqueKey: `key ${text}`,
    payload: JSON.stringify({ [text]: text }),
  };
  return { message, delaySeconds: 0 };
}

describe("message bodies", () => {
  /** U+0020..U+007F only: ASCII, and no control character JSON would have escaped anyway. */
  const printableAscii = (body: string) =>
    [...body].every((c) => c.charCodeAt(0) >= 0x20 && c.charCodeAt(0) <= 0x7f);

  it("are pure ASCII JSON that parses back to the very message, from send and sendBatch", async () => {
    mock.on(SendMessageCommand).resolves({});
    mock.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });
    const transport = new SqsTransport(sqs, queueUrls);
    const one = unicodeJob("one");
    await transport.send(one);
    const many = ["a", "b", "c"].map(unicodeJob);
    await transport.sendBatch(many);
    const sent = mock
      .commandCalls(SendMessageCommand)
      .map((c) => (c.args[0].input as SendMessageCommandInput).MessageBody);
    const batched = sentBatches().flatMap((entries) => entries.map((e) => e.MessageBody));
    const bodies = [...sent, ...batched] as string[];
    expect(bodies).toHaveLength(4);
    for (const body of bodies) {
      // Every one of them is a character any SQS takes; the rest are escapes.
      expect(printableAscii(body), body).toBe(true);
    }
    expect(parseJobMessage(bodies[0] as string)).toEqual(one.message);
    expect(bodies.slice(1).map((b) => parseJobMessage(b))).toEqual(many.map((j) => j.message));
    // The payload survives both JSON layers, lone surrogates included.
    const text = refusedSomewhere.join(" ");
    expect(JSON.parse(parseJobMessage(bodies[0] as string)?.payload ?? "")).toEqual({ [text]: text });
  });

  it("write every non-ASCII UTF-16 unit as one escape", () => {
    const body = encodeMessageBody(unicodeJob("x").message);
    expect(body).toContain("\\ud83d\\ude80"); // 🚀 as its two halves
    expect(body).toContain("\\ufffe");
    expect(body).toContain("\\uffff");
    expect(body).toContain("\\u00e9");
  });
});
