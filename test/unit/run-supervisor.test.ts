import { ChangeMessageVisibilityCommand, SQSClient } from "@aws-sdk/client-sqs";
import { DeleteCommand, DynamoDBDocumentClient, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { mockClient } from "aws-sdk-client-mock";
import { afterAll, afterEach, beforeEach, describe, expect, test } from "vitest";
import { app } from "../../app/index.ts";
import type { BatchKindDefinition } from "../../lib/job/batch.ts";
import type { Log } from "../../lib/observability/log.ts";
import { takePermit } from "../../lib/runtime/call-permit.ts";
import type { WorkerDeps } from "../../lib/runtime/record-types.ts";
import { JobWatch, superviseRun } from "../../lib/runtime/run-supervisor.ts";
import { createStoreContext } from "../../lib/store/context.ts";
import { SqsTransport } from "../../lib/transport/sqs-transport.ts";
import { ManualClock } from "../support/clock.ts";
import { newDynamoClient, newSqsClient, queueUrls } from "./aws-mocks.ts";

const ddb = mockClient(DynamoDBDocumentClient);
const sqs = mockClient(SQSClient);
// The mocks patch the SDK classes themselves: put them back for the files that share this worker.
afterAll(() => {
  ddb.restore();
  sqs.restore();
});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A log that keeps its warnings, to see what a failure left behind. */
function recordingLog(): Log & { warnings: { message: string; attributes?: Record<string, unknown> }[] } {
  const warnings: { message: string; attributes?: Record<string, unknown> }[] = [];
  return {
    debug() {},
    info() {},
    error() {},
    warn: (message, attributes) => warnings.push({ message, attributes }),
    warnings,
  };
}

let log: ReturnType<typeof recordingLog>;
let clock: ManualClock;

beforeEach(() => {
  ddb.reset();
  sqs.reset();
  log = recordingLog();
  clock = new ManualClock();
});
afterEach(() => {
  ddb.reset();
  sqs.reset();
});

const deps = () =>
  ({
    store: createStoreContext(newDynamoClient(), "jobs", clock),
    transport: new SqsTransport(newSqsClient(), queueUrls),
    clock,
    log,
  }) as unknown as WorkerDeps;

describe("JobWatch: a lane without a claim keeps its message's visibility", () => {
  test("an extension SQS refuses is logged with its error (stack kept), and tried again at the next tick", async () => {
    sqs.on(ChangeMessageVisibilityCommand).rejects(new Error("visibility refused"));
    const watch = new JobWatch(deps(), "job-1", {
      visibility: { queue: "default", receiptHandle: "rh", leaseSeconds: 0.15 },
    });
    await sleep(180);
    await watch.stop();
    const refused = log.warnings.filter((w) => w.message.includes("visibility"));
    expect(refused.length).toBeGreaterThanOrEqual(2);
    const error = refused[0]?.attributes?.error;
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).stack).toContain("visibility refused");
    expect(refused[0]?.attributes).toMatchObject({ jobId: "job-1", queue: "default" });
    expect(watch.cause).toBeUndefined();
  });
});

describe("superviseRun", () => {
  test("the timeout aborts the run with its cause, and work that ignores its signal is left behind", async () => {
    const controller = new AbortController();
    const end = await superviseRun(() => new Promise(() => undefined), controller, 20);
    expect(end).toEqual({ ok: false, abort: "timeout" });
    expect(controller.signal.reason).toBe("timeout");
  });
});

describe("a batch key's call permit", () => {
  // Only its name and its settings matter to the permit.
  const kind = {
    name: "permit-test",
    batch: { settings: { maxSize: 2, maxWaitSeconds: 1, policy: "size", maxKeyConcurrency: 1 } },
  } as unknown as BatchKindDefinition;
  const queue = app.queues.find((q) => q.name === "default");

  test("a release the store refuses is logged with its error; the permit lapses with its hold", async () => {
    ddb.on(UpdateCommand).resolves({});
    ddb.on(DeleteCommand).rejects(new Error("store unreachable"));
    const permit = await takePermit(deps(), kind, "k", queue as NonNullable<typeof queue>);
    expect(permit).toBeDefined();
    await permit?.free();
    const failed = log.warnings.find((w) => w.message.includes("call permit"));
    expect(failed?.attributes).toMatchObject({ kind: "permit-test", batchKey: "k" });
    expect(failed?.attributes?.error).toBeInstanceOf(Error);
  });
});
