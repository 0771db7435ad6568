import { ProvisionedThroughputExceededException, ThrottlingException } from "@aws-sdk/client-dynamodb";
import {
  ChangeMessageVisibilityBatchCommand,
  ChangeMessageVisibilityCommand,
  SQSClient,
} from "@aws-sdk/client-sqs";
import {
  DynamoDBDocumentClient,
  GetCommand,
  UpdateCommand,
  type UpdateCommandInput,
} from "@aws-sdk/lib-dynamodb";
import type { SQSEvent, SQSRecord } from "aws-lambda";
import { mockClient } from "aws-sdk-client-mock";
import { afterAll, afterEach, beforeEach, describe, expect, test } from "vitest";
import { app } from "../../app/index.ts";
import { Coalescing } from "../../lib/coalesce/coalesce-service.ts";
import { Durable } from "../../lib/durable/durable-service.ts";
import { openDurableRun } from "../../lib/durable/open-run.ts";
import { Flow } from "../../lib/flow/flow-service.ts";
import { Groups } from "../../lib/groups/group-service.ts";
import { silentLog } from "../../lib/observability/log.ts";
import { MemoryMetrics } from "../../lib/observability/metrics.ts";
import { Producer } from "../../lib/producer/enqueue.ts";
import { createWorker } from "../../lib/runtime/worker.ts";
import { createStoreContext } from "../../lib/store/context.ts";
import type { JobItem } from "../../lib/store/job-item.ts";
import { jobKey, queueStateKey } from "../../lib/store/keys.ts";
import { STORED_FORMATS } from "../../lib/store/stored-formats.ts";
import type { JobMessage } from "../../lib/transport/job-message.ts";
import { SqsTransport } from "../../lib/transport/sqs-transport.ts";
import { unreachableClaimStore } from "../support/claims.ts";
import { ManualClock } from "../support/clock.ts";
import { testApp, testRegistry } from "../support/test-app.ts";
import { kindOnDefaultQueue } from "../support/test-kinds.ts";
import { conditionalFailure, newDynamoClient, newSqsClient, queueUrls } from "./aws-mocks.ts";

const { queues } = app;

const ddb = mockClient(DynamoDBDocumentClient);
const sqs = mockClient(SQSClient);
// The mocks patch the SDK classes themselves: put them back for the files that share this worker.
afterAll(() => {
  ddb.restore();
  sqs.restore();
});

/** A kind that counts its runs, to prove a handler did or did not run. */
let countedRuns = 0;
const counted = kindOnDefaultQueue("counted", { maxAttempts: 3, timeoutSeconds: 30 }, async () => {
  countedRuns++;
  return { ran: true };
});

let clock: ManualClock;
let metrics: MemoryMetrics;
let worker: (event: SQSEvent) => Promise<{ batchItemFailures: { itemIdentifier: string }[] }>;

beforeEach(() => {
  ddb.reset();
  sqs.reset();
  countedRuns = 0;
  clock = new ManualClock();
  metrics = new MemoryMetrics();
  const services = {
    store: createStoreContext(newDynamoClient(), "jobs", clock),
    claims: unreachableClaimStore(),
    transport: new SqsTransport(newSqsClient(), queueUrls),
    registry: testRegistry([counted]),
    queues,
    clock,
    metrics,
    log: silentLog,
  };
  const flow = new Flow(services);
  const coalesce = new Coalescing(services);
  const producer = new Producer({ ...services, flow, coalesce });
  worker = createWorker(
    {
      ...services,
      producer,
      flow,
      coalesce,
      groups: new Groups({ ...services, producer }),
      durable: new Durable(
        { ...services, app: testApp(), producer, tokenUrlBase: () => undefined },
        openDurableRun,
      ),
      random: () => 0,
    },
    { recordConcurrency: 4 },
  );
  // No cooldown on the queue.
  ddb.on(GetCommand, { Key: queueStateKey("default") }).resolves({});
  // The hold at the start of each batch (one lease + 1 s for every record).
  sqs.on(ChangeMessageVisibilityBatchCommand).resolves({ Successful: [], Failed: [] });
});

afterEach(() => {
  ddb.reset();
  sqs.reset();
});

function message(id: string, kind: string, payload: unknown, over: Partial<JobMessage> = {}): JobMessage {
  return {
    v: 1,
    id,
    kind,
    queue: "default",
    maxAttempts: 3,
    priority: "normal",
    createdAt: clock.now() - 5_000,
    runAt: clock.now() - 5_000,
    payload: JSON.stringify(payload),
    ...over,
  };
}

/** The Lambda event shape for one SQS record. */
function record(messageId: string, body: string): SQSRecord {
  return {
    messageId,
    receiptHandle: `rh-${messageId}`,
    body,
    attributes: {
      ApproximateReceiveCount: "1",
      SentTimestamp: String(clock.now()),
      SenderId: "AIDEXAMPLE",
      ApproximateFirstReceiveTimestamp: String(clock.now()),
    },
    messageAttributes: {},
    md5OfBody: "0",
    eventSource: "aws:sqs",
    eventSourceARN: "arn:aws:sqs:us-east-1:000000000000:default",
    awsRegion: "us-east-1",
  };
}
const event = (...records: SQSRecord[]): SQSEvent => ({ Records: records });
const recordOf = (msg: JobMessage) => record(`m-${msg.id}`, JSON.stringify(msg));

/** The job item as DynamoDB returns it after a successful claim (ReturnValues ALL_NEW). */
/** The job's claim succeeds; every later update (its finalize) answers the item in `status`. */
function claimThenEnd(msg: JobMessage, status: JobItem["status"]) {
  ddb
    .on(UpdateCommand, { Key: jobKey(msg.id) })
    .resolvesOnce({ Attributes: claimed(msg) })
    .resolves({ Attributes: { ...claimed(msg), status } });
}

function claimed(msg: JobMessage, over: Partial<JobItem> = {}): JobItem {
  return {
    ...jobKey(msg.id),
    id: msg.id,
    kind: msg.kind,
    queue: msg.queue,
    status: "running",
    attempts: 1,
    maxAttempts: msg.maxAttempts,
    priority: msg.priority,
    createdAt: msg.createdAt,
    runAt: msg.runAt,
    payload: msg.payload,
    leaseToken: "tok",
    leaseUntil: clock.now() + 60_000,
    startedAt: clock.now(),
    claimedFrom: "queued",
    ...over,
  };
}

/** SQS requests other than the batch's hold: what the records' outcomes did to their messages. */
const settlingCalls = () =>
  sqs.calls().filter((c) => !(c.args[0] instanceof ChangeMessageVisibilityBatchCommand));

const updatesOf = (id: string): UpdateCommandInput[] =>
  ddb
    .commandCalls(UpdateCommand)
    .map((c) => c.args[0].input)
    .filter((i) => i.Key?.pk === jobKey(id).pk);

/** The value an update SETs on an attribute (resolving the placeholders). */
function setValue(input: UpdateCommandInput | undefined, attr: string): unknown {
  const name = Object.entries(input?.ExpressionAttributeNames ?? {}).find(([, a]) => a === attr)?.[0];
  const m = name ? new RegExp(`${name} = (:v\\d+)`).exec(input?.UpdateExpression ?? "") : null;
  return m ? input?.ExpressionAttributeValues?.[m[1] as string] : undefined;
}
const isClaim = (i: UpdateCommandInput | undefined) =>
  setValue(i, "status") === "running" && (i?.ConditionExpression ?? "").includes("attribute_not_exists(#pk)");

/**
 * The visibility changes the worker sent after its runs: every ChangeMessageVisibilityBatch entry
 * but the batch hold's (the first request, which hides every record for a lease).
 */
function visibilityChanges() {
  return sqs
    .commandCalls(ChangeMessageVisibilityBatchCommand)
    .slice(1)
    .flatMap((c) => c.args[0].input.Entries ?? [])
    .map((e) => ({ ReceiptHandle: e.ReceiptHandle, VisibilityTimeout: e.VisibilityTimeout }));
}

describe("worker: the batch is hidden for one lease before any record runs", () => {
  test("one ChangeMessageVisibilityBatch for every record, one lease + 1 s, before the first claim", async () => {
    const msgs = ["A", "B", "C"].map((id) => message(id, "counted", {}));
    let holdsBeforeFirstClaim: number | undefined;
    for (const m of msgs) {
      ddb.on(UpdateCommand, { Key: jobKey(m.id) }).callsFake(() => {
        holdsBeforeFirstClaim ??= sqs.commandCalls(ChangeMessageVisibilityBatchCommand).length;
        return { Attributes: claimed(m) };
      });
    }
    const out = await worker(event(...msgs.map(recordOf)));
    expect(out.batchItemFailures).toEqual([]);
    const holds = sqs.commandCalls(ChangeMessageVisibilityBatchCommand).map((c) => c.args[0].input);
    expect(holds).toHaveLength(1);
    expect(holds[0]?.Entries).toEqual(
      msgs.map((m, i) => ({ Id: String(i), ReceiptHandle: `rh-m-${m.id}`, VisibilityTimeout: 31 })),
    );
    expect(holdsBeforeFirstClaim).toBe(1);
    expect(countedRuns).toBe(3);
  });

  test("a hold SQS refuses for one entry, or as a whole, doesn't stop the batch", async () => {
    const a = message("A", "counted", {});
    const b = message("B", "counted", {});
    sqs
      .on(ChangeMessageVisibilityBatchCommand)
      .resolvesOnce({
        Successful: [{ Id: "1" }],
        Failed: [{ Id: "0", Code: "ReceiptHandleIsInvalid", SenderFault: true, Message: "gone" }],
      })
      .rejects(new Error("SQS is down"));
    for (const m of [a, b]) {
      claimThenEnd(m, "done");
    }
    expect((await worker(event(recordOf(a), recordOf(b)))).batchItemFailures).toEqual([]);
    expect(countedRuns).toBe(2);
    ddb.on(UpdateCommand, { Key: jobKey("A") }).resolves({ Attributes: claimed(a) });
    expect((await worker(event(recordOf(a)))).batchItemFailures).toEqual([]);
    expect(countedRuns).toBe(3);
  });
});

describe("worker: DynamoDB throttling on claim", () => {
  test("only that record is a batchItemFailure; the others in the batch finish", async () => {
    const a = message("A", "echo", { a: 1 });
    const b = message("B", "echo", { b: 2 });
    const c = message("C", "counted", {});
    ddb
      .on(UpdateCommand, { Key: jobKey("A") })
      .rejects(new ProvisionedThroughputExceededException({ message: "throughput exceeded", $metadata: {} }));
    claimThenEnd(b, "done");
    claimThenEnd(c, "done");

    const out = await worker(event(recordOf(a), recordOf(b), recordOf(c)));

    expect(out.batchItemFailures).toEqual([{ itemIdentifier: "m-A" }]);
    // A: one claim attempt, nothing after it.
    expect(updatesOf("A")).toHaveLength(1);
    expect(isClaim(updatesOf("A")[0])).toBe(true);
    // B and C: claim, then finalize as done with their results, under the claim's fence.
    for (const [id, result] of [
      ["B", '{"b":2}'],
      ["C", '{"ran":true}'],
    ] as const) {
      const [claim, fin] = updatesOf(id);
      expect(isClaim(claim)).toBe(true);
      expect(setValue(fin, "status")).toBe("done");
      expect(setValue(fin, "result")).toBe(result);
      expect(Object.values(fin?.ExpressionAttributeValues ?? {})).toContain(setValue(claim, "leaseToken"));
    }
    expect(countedRuns).toBe(1);
    expect(metrics.total("started")).toBe(2);
    expect(metrics.total("succeeded")).toBe(2);
    expect(settlingCalls()).toHaveLength(0);
  });

  test("a ThrottlingException on finalize also fails only its record", async () => {
    const a = message("A", "echo", 1);
    const b = message("B", "echo", 2);
    ddb
      .on(UpdateCommand, { Key: jobKey("A") })
      .resolvesOnce({ Attributes: claimed(a) })
      .rejects(new ThrottlingException({ message: "Rate exceeded", $metadata: {} }));
    claimThenEnd(b, "done");

    const out = await worker(event(recordOf(a), recordOf(b)));
    expect(out.batchItemFailures).toEqual([{ itemIdentifier: "m-A" }]);
    expect(metrics.total("succeeded")).toBe(1);
  });
});

describe("worker: ChangeMessageVisibility fails on a retry", () => {
  test("the record is still reported as a failure, and the batch's other records are unaffected", async () => {
    const f = message("F", "fail", { message: "nope" });
    const e = message("E", "echo", "ok");
    claimThenEnd(f, "queued");
    claimThenEnd(e, "done");
    // SQS refuses every visibility change: the batch hold's and the retry's.
    sqs.on(ChangeMessageVisibilityBatchCommand).resolves({
      Successful: [],
      Failed: [{ Id: "0", Code: "ReceiptHandleIsInvalid", SenderFault: true, Message: "expired" }],
    });

    const out = await worker(event(recordOf(f), recordOf(e)));

    expect(out.batchItemFailures).toEqual([{ itemIdentifier: "m-F" }]);
    // The retry was recorded before the visibility change was tried: queued, due after the backoff.
    const fin = updatesOf("F")[1];
    expect(setValue(fin, "status")).toBe("queued");
    expect(setValue(fin, "runAt")).toBe(clock.now() + 1_000); // attempt 1, base 2 s, random 0 → 1 s
    expect(setValue(fin, "lastError")).toBe("nope");
    // The retry's backoff went out in the invocation's one batch of visibility changes, after the runs.
    expect(visibilityChanges()).toEqual([{ ReceiptHandle: "rh-m-F", VisibilityTimeout: 1 }]);
    expect(sqs.commandCalls(ChangeMessageVisibilityCommand)).toHaveLength(0);
    expect(metrics.total("retried")).toBe(1);
    expect(metrics.total("succeeded")).toBe(1);
  });

  test("when the visibility change works, a retry is still left on the queue with the backoff as its visibility", async () => {
    const f = message("F", "fail", {});
    ddb
      .on(UpdateCommand, { Key: jobKey("F") })
      .resolvesOnce({ Attributes: claimed(f, { attempts: 2 }) })
      .resolves({ Attributes: { ...claimed(f), status: "queued" } });
    const out = await worker(event(recordOf(f)));
    expect(out.batchItemFailures).toEqual([{ itemIdentifier: "m-F" }]);
    // attempt 2: nominal 4 s, random 0 → 2 s
    expect(visibilityChanges()).toEqual([{ ReceiptHandle: "rh-m-F", VisibilityTimeout: 2 }]);
    expect(setValue(updatesOf("F")[1], "runAt")).toBe(clock.now() + 2_000);
  });
});

describe("worker: messages that are not jobs", () => {
  test("a message of a newer format version (a rollback met it) fails its delivery and stays queued, untouched", async () => {
    // A later skyforge's message: this version can't read it, and must not drop it as junk.
    const newer = { ...message("N", "echo", 1), v: STORED_FORMATS.message + 1 };
    const out = await worker(event(record("newer-1", JSON.stringify(newer))));
    expect(out.batchItemFailures).toEqual([{ itemIdentifier: "newer-1" }]);
    expect(ddb.calls()).toHaveLength(0);
    expect(sqs.calls()).toHaveLength(0);
  });

  test("an unparseable body is acked (never a failure) and touches nothing", async () => {
    const out = await worker(
      event(
        record("junk-1", "not json at all"),
        record("junk-2", JSON.stringify({ v: 1, id: "x" })),
        record("junk-3", JSON.stringify(message("Q", "echo", 1, { queue: "undeclared" }))),
        record("junk-4", ""),
      ),
    );
    expect(out.batchItemFailures).toEqual([]);
    expect(ddb.calls()).toHaveLength(0);
    expect(sqs.calls()).toHaveLength(0);
  });

  test("an unparseable record doesn't disturb a good one in the same batch", async () => {
    const a = message("A", "counted", {});
    claimThenEnd(a, "done");
    const out = await worker(event(record("junk", "{"), recordOf(a)));
    expect(out.batchItemFailures).toEqual([]);
    expect(countedRuns).toBe(1);
  });
});

describe("worker: lease lost at finalize", () => {
  test("a conditional failure carrying the new owner's item → batchItemFailure, leaseLost counted", async () => {
    const a = message("A", "counted", {});
    ddb
      .on(UpdateCommand, { Key: jobKey("A") })
      .resolvesOnce({ Attributes: claimed(a) })
      .rejects(
        conditionalFailure({
          ...claimed(a),
          attempts: 2,
          leaseToken: "someone-else",
          claimedFrom: "running",
        }),
      );

    const out = await worker(event(recordOf(a)));

    expect(out.batchItemFailures).toEqual([{ itemIdentifier: "m-A" }]);
    expect(metrics.total("leaseLost")).toBe(1);
    expect(metrics.total("succeeded")).toBe(0);
    // One finalize attempt and no rewrite; the message is left alone for the new owner.
    expect(updatesOf("A")).toHaveLength(2);
    expect(ddb.commandCalls(GetCommand, { Key: jobKey("A") })).toHaveLength(0);
    expect(settlingCalls()).toHaveLength(0);
  });

  test("without the item on the error, the store reads it back (consistent) and still sees the lease lost", async () => {
    const a = message("A", "counted", {});
    ddb
      .on(UpdateCommand, { Key: jobKey("A") })
      .resolvesOnce({ Attributes: claimed(a) })
      .rejects(conditionalFailure());
    ddb
      .on(GetCommand, { Key: jobKey("A") })
      .resolves({ Item: { ...claimed(a), status: "done", leaseToken: undefined } });

    const out = await worker(event(recordOf(a)));

    expect(out.batchItemFailures).toEqual([{ itemIdentifier: "m-A" }]);
    expect(metrics.total("leaseLost")).toBe(1);
    const reads = ddb.commandCalls(GetCommand, { Key: jobKey("A") }).map((c) => c.args[0].input);
    expect(reads).toHaveLength(1);
    expect(reads[0]?.ConsistentRead).toBe(true);
  });

  test("a cancel requested during the run turns a done finalize into cancelled (still our lease)", async () => {
    const a = message("A", "counted", {});
    let token = "";
    let call = 0;
    ddb.on(UpdateCommand, { Key: jobKey("A") }).callsFake(async (input: UpdateCommandInput) => {
      call++;
      if (call === 1) {
        token = setValue(input, "leaseToken") as string;
        return { Attributes: claimed(a, { leaseToken: token }) };
      }
      if (call === 2)
        throw conditionalFailure({ ...claimed(a, { leaseToken: token }), cancelRequested: true });
      return { Attributes: { ...claimed(a), status: "cancelled" } };
    });

    const out = await worker(event(recordOf(a)));

    expect(out.batchItemFailures).toEqual([]);
    const [, first, second] = updatesOf("A");
    expect(setValue(first, "status")).toBe("done");
    expect(setValue(second, "status")).toBe("cancelled");
    expect(metrics.total("cancelled")).toBe(1);
    expect(metrics.total("leaseLost")).toBe(0);
  });
});

describe("worker: duplicate deliveries never run the handler again", () => {
  test("a running job under a live lease: deferred until the lease would expire", async () => {
    const a = message("A", "counted", {});
    ddb
      .on(UpdateCommand, { Key: jobKey("A") })
      .rejects(
        conditionalFailure({ ...claimed(a, { leaseToken: "other", leaseUntil: clock.now() + 30_000 }) }),
      );
    const out = await worker(event(recordOf(a)));

    expect(out.batchItemFailures).toEqual([{ itemIdentifier: "m-A" }]);
    expect(countedRuns).toBe(0);
    expect(metrics.total("duplicateDeliveries")).toBe(1);
    expect(visibilityChanges()).toEqual([{ ReceiptHandle: "rh-m-A", VisibilityTimeout: 31 }]);
  });

  test("an already finished job: acked without running", async () => {
    const a = message("A", "counted", {});
    ddb
      .on(UpdateCommand, { Key: jobKey("A") })
      .rejects(conditionalFailure({ ...claimed(a), status: "done" }));
    const out = await worker(event(recordOf(a)));
    expect(out.batchItemFailures).toEqual([]);
    expect(countedRuns).toBe(0);
    expect(metrics.total("duplicateDeliveries")).toBe(1);
    expect(updatesOf("A")).toHaveLength(1);
  });
});
