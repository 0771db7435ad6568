import { ProvisionedThroughputExceededException } from "@aws-sdk/client-dynamodb";
import { ChangeMessageVisibilityCommand, MessageNotInflight, SQSClient } from "@aws-sdk/client-sqs";
import { DynamoDBDocumentClient, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { mockClient } from "aws-sdk-client-mock";
import { afterAll, afterEach, beforeEach, describe, expect, test } from "vitest";
import type { AbortCause } from "../../lib/job/kind.ts";
import type { Log } from "../../lib/observability/log.ts";
import { Heartbeat } from "../../lib/runtime/heartbeat.ts";
import { createStoreContext } from "../../lib/store/context.ts";
import { SqsTransport } from "../../lib/transport/sqs-transport.ts";
import { ManualClock } from "../support/clock.ts";
import { waitFor } from "../support/wait.ts";
import { conditionalFailure, newDynamoClient, newSqsClient, queueUrls } from "./aws-mocks.ts";

const ddb = mockClient(DynamoDBDocumentClient);
const sqs = mockClient(SQSClient);
// The mocks patch the SDK classes themselves: put them back for the files that share this worker.
afterAll(() => {
  ddb.restore();
  sqs.restore();
});

let clock: ManualClock;
let aborts: AbortCause[];
let warnings: string[];
let hb: Heartbeat;

beforeEach(() => {
  ddb.reset();
  sqs.reset();
  clock = new ManualClock();
  aborts = [];
  warnings = [];
  const log: Log = { debug() {}, info() {}, error() {}, warn: (m) => void warnings.push(m) };
  hb = heartbeatFor(60_000, log);
});

/** A beat that ends the run with `cause`, and so extends no message. */
async function beatAbortsWith(cause: AbortCause): Promise<void> {
  await hb.beat();
  expect(aborts).toEqual([cause]);
  expect(sqs.calls()).toHaveLength(0);
}

/** The heartbeat of job J under fence "tok", with a lease of `leaseMs` from now, on the mocked clients. */
function heartbeatFor(leaseMs: number, log: Log): Heartbeat {
  return new Heartbeat(
    {
      id: "J",
      queue: "default",
      fence: "tok",
      receiptHandle: "rh-J",
      leaseMs,
      leaseUntil: clock.now() + leaseMs,
    },
    createStoreContext(newDynamoClient(), "jobs", clock),
    new SqsTransport(newSqsClient(), queueUrls),
    (cause) => aborts.push(cause),
    log,
  );
}

afterEach(() => {
  hb.stop();
  ddb.reset();
  sqs.reset();
});

describe("Heartbeat.beat", () => {
  test("renews the lease from the injected clock under the fence, then extends the message by one lease", async () => {
    ddb.on(UpdateCommand).resolves({ Attributes: { status: "running", leaseToken: "tok" } });
    sqs.on(ChangeMessageVisibilityCommand).resolves({});
    await hb.beat();
    const input = ddb.commandCalls(UpdateCommand)[0]?.args[0].input;
    expect(Object.values(input?.ExpressionAttributeValues ?? {})).toEqual(
      expect.arrayContaining([clock.now() + 60_000, "tok", "running"]),
    );
    expect(sqs.commandCalls(ChangeMessageVisibilityCommand)[0]?.args[0].input).toMatchObject({
      ReceiptHandle: "rh-J",
      VisibilityTimeout: 60,
    });
    expect(aborts).toEqual([]);
  });

  test("a conditional failure (lease taken over) aborts with lease_lost and skips the visibility change", async () => {
    ddb
      .on(UpdateCommand)
      .rejects(conditionalFailure({ pk: "job#J", sk: "job", status: "running", leaseToken: "other" }));
    await beatAbortsWith("lease_lost");
  });

  test("a cancel request read by the renewal aborts with cancelled", async () => {
    ddb
      .on(UpdateCommand)
      .resolves({ Attributes: { status: "running", leaseToken: "tok", cancelRequested: true } });
    await beatAbortsWith("cancelled");
  });

  test("SDK errors (DynamoDB throttling, SQS visibility) are logged, never thrown, and don't abort", async () => {
    ddb
      .on(UpdateCommand)
      .rejectsOnce(new ProvisionedThroughputExceededException({ message: "slow", $metadata: {} }));
    await expect(hb.beat()).resolves.toBeUndefined();
    ddb.on(UpdateCommand).resolves({ Attributes: { status: "running" } });
    sqs
      .on(ChangeMessageVisibilityCommand)
      .rejects(new MessageNotInflight({ message: "not in flight", $metadata: {} }));
    await expect(hb.beat()).resolves.toBeUndefined();
    expect(aborts).toEqual([]);
    expect(warnings).toHaveLength(2);
  });

  test("a lease that ran out before it could be renewed aborts at once, without asking the store", async () => {
    // A frozen process (or an unreachable store) wakes up after its lease: another worker may own
    // the job now, so the run must stop before its next renewal could tell.
    clock.advance(60_000);
    await hb.beat();
    expect(aborts).toEqual(["lease_lost"]);
    expect(ddb.calls()).toHaveLength(0);
    expect(sqs.calls()).toHaveLength(0);
  });

  test("each renewal moves the deadline: a lease kept alive never runs out", async () => {
    ddb.on(UpdateCommand).resolves({ Attributes: { status: "running", leaseToken: "tok" } });
    sqs.on(ChangeMessageVisibilityCommand).resolves({});
    for (let i = 0; i < 5; i++) {
      clock.advance(40_000);
      await hb.beat();
    }
    expect(aborts).toEqual([]);
    expect(ddb.commandCalls(UpdateCommand)).toHaveLength(5);
  });

  test("a renewal that hangs doesn't hold the run past its lease: it is stopped a margin before the lease ends", async () => {
    // A 1.5 s lease whose renewal never answers: the run stops a quarter of the lease before it ends.
    const short = heartbeatFor(1500, { debug() {}, info() {}, warn() {}, error() {} });
    ddb.on(UpdateCommand).callsFake(() => new Promise(() => {}));
    short.start();
    void short.beat();
    await waitFor(async () => aborts.length > 0, "the deadline to stop the run", 5_000, 10);
    expect(aborts).toEqual(["lease_lost"]);
    await Promise.race([short.stop(), Promise.resolve()]);
  });

  test("a beat asked for after stop (a handler left running) writes nothing", async () => {
    ddb.on(UpdateCommand).resolves({ Attributes: { status: "running", leaseToken: "tok" } });
    await hb.stop();
    await hb.beat();
    expect(ddb.calls()).toHaveLength(0);
    expect(sqs.calls()).toHaveLength(0);
  });

  test("concurrent beats share one renewal", async () => {
    ddb.on(UpdateCommand).resolves({ Attributes: { status: "running" } });
    sqs.on(ChangeMessageVisibilityCommand).resolves({});
    await Promise.all([hb.beat(), hb.beat(), hb.beat()]);
    expect(ddb.commandCalls(UpdateCommand)).toHaveLength(1);
    await hb.beat();
    expect(ddb.commandCalls(UpdateCommand)).toHaveLength(2);
  });
});
