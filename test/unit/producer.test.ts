import { ProvisionedThroughputExceededException, ThrottlingException } from "@aws-sdk/client-dynamodb";
import {
  QueueDoesNotExist,
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSClient,
} from "@aws-sdk/client-sqs";
import { DeleteCommand, DynamoDBDocumentClient, PutCommand } from "@aws-sdk/lib-dynamodb";
import { mockClient } from "aws-sdk-client-mock";
import { afterAll, afterEach, beforeEach, describe, expect, test } from "vitest";
import { app } from "../../app/index.ts";
import { Coalescing } from "../../lib/coalesce/coalesce-service.ts";
import { ClientError } from "../../lib/errors.ts";
import { Flow } from "../../lib/flow/flow-service.ts";
import { MAX_PAYLOAD_BYTES } from "../../lib/job/schemas.ts";
import { silentLog } from "../../lib/observability/log.ts";
import { MemoryMetrics } from "../../lib/observability/metrics.ts";
import { Producer } from "../../lib/producer/enqueue.ts";
import { createStoreContext } from "../../lib/store/context.ts";
import { jobKey, uniqueKeyLock } from "../../lib/store/keys.ts";
import { JobMessage } from "../../lib/transport/job-message.ts";
import { SqsTransport } from "../../lib/transport/sqs-transport.ts";
import { unreachableClaimStore } from "../support/claims.ts";
import { ManualClock } from "../support/clock.ts";
import { testRegistry } from "../support/test-app.ts";
import { conditionalFailure, newDynamoClient, newSqsClient, queueUrls } from "./aws-mocks.ts";

const { queues } = app;

const ddb = mockClient(DynamoDBDocumentClient);
const sqs = mockClient(SQSClient);
// The mocks patch the SDK classes themselves: put them back for the files that share this worker.
afterAll(() => {
  ddb.restore();
  sqs.restore();
});

let clock: ManualClock;
let metrics: MemoryMetrics;
let producer: Producer;

beforeEach(() => {
  ddb.reset();
  sqs.reset();
  clock = new ManualClock();
  metrics = new MemoryMetrics();
  const services = {
    store: createStoreContext(newDynamoClient(), "jobs", clock),
    claims: unreachableClaimStore(),
    transport: new SqsTransport(newSqsClient(), queueUrls),
    registry: testRegistry(),
    queues,
    clock,
    metrics,
    log: silentLog,
  };
  producer = new Producer({ ...services, flow: new Flow(services), coalesce: new Coalescing(services) });
});

afterEach(() => {
  ddb.reset();
  sqs.reset();
});

const puts = () => ddb.commandCalls(PutCommand).map((c) => c.args[0].input);
const jobPuts = () => puts().filter((p) => String(p.Item?.pk).startsWith("job#"));
const sqsError = () =>
  new QueueDoesNotExist({ message: "The specified queue does not exist.", $metadata: {} });

/** SQS takes every entry of each batch send. */
const sendBatchAccepts = () =>
  sqs.on(SendMessageBatchCommand).callsFake(async (input) => ({
    Successful: (input.Entries as { Id: string }[]).map((e) => ({
      Id: e.Id,
      MessageId: "m",
      MD5OfMessageBody: "x",
    })),
    Failed: [],
  }));

describe("enqueue: SQS send fails", () => {
  test("the unique-key lock is released, the error propagates and no job item is written", async () => {
    ddb.on(PutCommand).resolves({});
    ddb.on(DeleteCommand).resolves({});
    const failure = sqsError();
    sqs.on(SendMessageCommand).rejects(failure);

    await expect(producer.enqueue({ kind: "echo", payload: { a: 1 }, uniqueKey: "order-7" })).rejects.toBe(
      failure,
    );

    // The lock was taken for some job id ...
    const lockPut = puts().find((p) => p.Item?.pk === uniqueKeyLock("default", "order-7").pk);
    expect(lockPut).toBeDefined();
    const jobId = lockPut?.Item?.jobId as string;
    expect(jobId).toBeTruthy();
    // ... the message for that id was attempted ...
    const sent = sqs.commandCalls(SendMessageCommand);
    expect(sent).toHaveLength(1);
    expect(JSON.parse(sent[0]?.args[0].input.MessageBody ?? "{}")).toMatchObject({
      id: jobId,
      uniqueKey: "order-7",
    });
    // ... and the lock is given back, conditionally on still naming that job.
    const deletes = ddb.commandCalls(DeleteCommand).map((c) => c.args[0].input);
    expect(deletes).toHaveLength(1);
    const del = deletes[0];
    expect(del?.Key).toEqual(uniqueKeyLock("default", "order-7"));
    expect(del?.ConditionExpression).toBeDefined();
    const names = del?.ExpressionAttributeNames ?? {};
    const values = del?.ExpressionAttributeValues ?? {};
    const [namePh, valuePh] = (del?.ConditionExpression ?? "").split(" = ");
    expect(names[namePh ?? ""]).toBe("jobId");
    expect(values[valuePh ?? ""]).toBe(jobId);
    // No job item was written, and nothing was counted as enqueued.
    expect(jobPuts()).toEqual([]);
    expect(metrics.total("enqueued")).toBe(0);
  });

  test("without a uniqueKey there is nothing to release; still no job item", async () => {
    ddb.on(PutCommand).resolves({});
    sqs.on(SendMessageCommand).rejects(sqsError());

    await expect(producer.enqueue({ kind: "echo", payload: 1 })).rejects.toBeInstanceOf(QueueDoesNotExist);
    expect(ddb.commandCalls(DeleteCommand)).toHaveLength(0);
    expect(puts()).toEqual([]);
  });
});

describe("enqueue: order of writes", () => {
  test("the message goes out before the job item (the message is the outbox)", async () => {
    const order: string[] = [];
    sqs.on(SendMessageCommand).callsFake(async () => {
      order.push("send");
      return { MessageId: "m-1" };
    });
    ddb.on(PutCommand).callsFake(async (input) => {
      order.push(`put ${String(input.Item?.pk)}`);
      return {};
    });

    const r = await producer.enqueue({ kind: "echo", payload: { hello: "world" } });
    expect(order).toEqual(["send", `put ${jobKey(r.job.id).pk}`]);
    const body = JobMessage.parse(
      JSON.parse(sqs.commandCalls(SendMessageCommand)[0]?.args[0].input.MessageBody ?? ""),
    );
    expect(body).toMatchObject({
      id: r.job.id,
      kind: "echo",
      queue: "default",
      payload: '{"hello":"world"}',
    });
    expect(r).toMatchObject({ duplicate: false, job: { status: "queued", payload: { hello: "world" } } });
    expect(metrics.total("enqueued")).toBe(1);
  });
});

describe("enqueue: the job item write fails after the send", () => {
  test("a throttled put still accepts the job: the message carries it", async () => {
    sqs.on(SendMessageCommand).resolves({ MessageId: "m-1" });
    ddb
      .on(PutCommand)
      .rejects(new ProvisionedThroughputExceededException({ message: "slow down", $metadata: {} }));

    const r = await producer.enqueue({ kind: "echo", payload: { n: 2 } });

    const msg = JobMessage.parse(
      JSON.parse(sqs.commandCalls(SendMessageCommand)[0]?.args[0].input.MessageBody ?? ""),
    );
    expect(r).toMatchObject({ duplicate: false, job: { id: msg.id, status: "queued", payload: { n: 2 } } });
    expect(jobPuts()).toHaveLength(1);
    expect(metrics.total("enqueued")).toBe(1);
  });

  test("a scheduled job has no message, so a failed put is the caller's error", async () => {
    ddb.on(PutCommand).rejects(new ThrottlingException({ message: "Rate exceeded", $metadata: {} }));
    await expect(producer.enqueue({ kind: "echo", delaySeconds: 3600 })).rejects.toBeInstanceOf(
      ThrottlingException,
    );
    expect(sqs.calls()).toHaveLength(0);
    expect(metrics.total("enqueued")).toBe(0);
  });

  test("the worker built the job first: the put's conditional failure reports the job as it is now", async () => {
    sqs.on(SendMessageCommand).resolves({ MessageId: "m-1" });
    ddb.on(PutCommand).callsFake(async (input) => {
      const item = input.Item as Record<string, unknown>;
      throw conditionalFailure({
        ...item,
        status: "running",
        attempts: 1,
        leaseToken: "t",
        startedAt: clock.now(),
      });
    });
    const r = await producer.enqueue({ kind: "echo", payload: "hi" });
    expect(r.duplicate).toBe(false);
    expect(r.job).toMatchObject({ status: "running", attempts: 1, payload: "hi" });
  });
});

describe("enqueueBatch", () => {
  test("entries SendMessageBatch reports as Failed get an error result; the others succeed", async () => {
    sqs.on(SendMessageBatchCommand).callsFake(async (input) => {
      const entries = input.Entries as { Id: string }[];
      const failedId = entries[1]?.Id as string;
      return {
        Successful: entries
          .filter((e) => e.Id !== failedId)
          .map((e) => ({ Id: e.Id, MessageId: `m-${e.Id}`, MD5OfMessageBody: "x" })),
        Failed: [{ Id: failedId, SenderFault: false, Code: "InternalError", Message: "try again" }],
      };
    });
    ddb.on(PutCommand).resolves({});

    const results = await producer.enqueueBatch([
      { kind: "echo", payload: 0 },
      { kind: "echo", payload: 1 },
      { kind: "echo", payload: 2 },
    ]);

    const sentIds = (sqs.commandCalls(SendMessageBatchCommand)[0]?.args[0].input.Entries ?? []).map(
      (e) => e.Id,
    );
    expect(sentIds).toHaveLength(3);
    expect(results.map((r) => r.index)).toEqual([0, 1, 2]);
    expect(results[0]).toEqual({ index: 0, id: sentIds[0], duplicate: false });
    expect(results[1]).toMatchObject({ index: 1, error: { code: "internal" } });
    expect(results[1]?.id).toBeUndefined();
    expect(results[2]).toEqual({ index: 2, id: sentIds[2], duplicate: false });
    // Only the jobs whose message is out get an item.
    expect(jobPuts().map((p) => p.Item?.id)).toEqual(expect.arrayContaining([sentIds[0], sentIds[2]]));
    expect(jobPuts()).toHaveLength(2);
    expect(metrics.total("enqueued")).toBe(2);
  });

  test("a SendMessageBatch call that throws fails all of its entries and writes nothing", async () => {
    sqs.on(SendMessageBatchCommand).rejects(sqsError());
    ddb.on(PutCommand).resolves({});
    const results = await producer.enqueueBatch([{ kind: "echo" }, { kind: "echo" }]);
    expect(results.map((r) => r.error?.code)).toEqual(["internal", "internal"]);
    expect(puts()).toEqual([]);
  });

  test.each([
    [
      "ProvisionedThroughputExceededException",
      () => new ProvisionedThroughputExceededException({ message: "slow down", $metadata: {} }),
    ],
    ["ThrottlingException", () => new ThrottlingException({ message: "Rate exceeded", $metadata: {} })],
  ])("%s on the item put after the send: the result still carries the id", async (_name, makeError) => {
    sendBatchAccepts();
    ddb.on(PutCommand).rejects(makeError());

    const results = await producer.enqueueBatch([
      { kind: "echo", payload: { n: 1 } },
      { kind: "flaky", payload: { failTimes: 1 } },
    ]);

    const entries = sqs.commandCalls(SendMessageBatchCommand)[0]?.args[0].input.Entries ?? [];
    expect(results).toEqual([
      { index: 0, id: entries[0]?.Id, duplicate: false },
      { index: 1, id: entries[1]?.Id, duplicate: false },
    ]);
    expect(results.every((r) => r.error === undefined)).toBe(true);
    // The put really was attempted and failed; the message alone carries the whole job.
    expect(jobPuts()).toHaveLength(2);
    const msg = JobMessage.parse(JSON.parse(entries[1]?.MessageBody ?? ""));
    expect(msg).toMatchObject({
      id: results[1]?.id,
      kind: "flaky",
      queue: "default",
      maxAttempts: 5,
      payload: '{"failTimes":1}',
    });
  });

  test("one invalid item fails alone", async () => {
    sendBatchAccepts();
    ddb.on(PutCommand).resolves({});
    const results = await producer.enqueueBatch([
      { kind: "nope" },
      { kind: "echo" },
      { kind: "flaky", payload: {} },
    ]);
    expect(results[0]).toMatchObject({ index: 0, error: { code: "unknown_kind" } });
    expect(results[1]).toMatchObject({ index: 1, duplicate: false, id: expect.any(String) });
    expect(results[2]).toMatchObject({ index: 2, error: { code: "validation_error" } });
    expect(sqs.commandCalls(SendMessageBatchCommand)[0]?.args[0].input.Entries).toHaveLength(1);
  });
});

describe("enqueue: validation (no AWS call is made)", () => {
  async function clientError(raw: unknown): Promise<ClientError> {
    const err = await producer.enqueue(raw).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ClientError);
    expect(ddb.calls()).toHaveLength(0);
    expect(sqs.calls()).toHaveLength(0);
    return err as ClientError;
  }

  test("unknown kind → unknown_kind (400)", async () => {
    const err = await clientError({ kind: "no-such-kind", payload: {} });
    expect(err.code).toBe("unknown_kind");
    expect(err.httpStatus).toBe(400);
    expect(err.message).toContain("no-such-kind");
  });

  test("payload too large → payload_too_large (413)", async () => {
    const err = await clientError({ kind: "echo", payload: "x".repeat(MAX_PAYLOAD_BYTES) });
    expect(err.code).toBe("payload_too_large");
    expect(err.httpStatus).toBe(413);
  });

  test("a payload that doesn't match the kind → validation_error with issues under payload", async () => {
    const err = await clientError({ kind: "flaky", payload: { failTimes: "three" } });
    expect(err.code).toBe("validation_error");
    expect(err.issues?.map((i) => i.path)).toEqual(["payload.failTimes"]);
    const missing = await clientError({ kind: "sleep" });
    expect(missing.issues?.[0]?.path).toBe("payload");
  });

  test("a malformed request → validation_error naming the field", async () => {
    const err = await clientError({ kind: "echo", delaySeconds: 1, runAt: "2026-01-01T00:00:00Z" });
    expect(err.code).toBe("validation_error");
    expect(err.issues?.map((i) => i.path)).toEqual(["runAt"]);
    const unknownQueue = await clientError({ kind: "echo", queue: "elsewhere" });
    expect(unknownQueue.issues?.map((i) => i.path)).toEqual(["queue"]);
  });
});
