import {
  GetEventSourceMappingCommand,
  LambdaClient,
  UpdateEventSourceMappingCommand,
  type UpdateEventSourceMappingCommandInput,
} from "@aws-sdk/client-lambda";
import { GetQueueAttributesCommand, SQSClient } from "@aws-sdk/client-sqs";
import type { Context } from "aws-lambda";
import { mockClient } from "aws-sdk-client-mock";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { app } from "../../app/index.ts";
import type { HttpEvent } from "../../lib/api/http.ts";
import { apiRouteMatcher } from "../../lib/api/route-keys.ts";
import { createApiHandler } from "../../lib/api/routes.ts";
import type { QueueDeclaration } from "../../lib/declarations/queue-declaration.ts";
import { buildEngine, openDurableRun } from "../../lib/engine.ts";
import { silentLog } from "../../lib/observability/log.ts";
import { MemoryMetrics } from "../../lib/observability/metrics.ts";
import { QueueAdmin } from "../../lib/ops/queue-admin.ts";
import { LambdaEventSourceControl } from "../../lib/queue-control/event-source-control.ts";
import type { Engine } from "../../lib/services/engine-services.ts";
import { getQueueState, setQueueConfig } from "../../lib/store/queue-state.ts";
import { dynamoClient, provisionTable, type RunningEmulator, startDynalite } from "../../local/emulators.ts";
import { unreachableClaims } from "../support/claims.ts";
import { ManualClock } from "../support/clock.ts";
import { testApp } from "../support/test-app.ts";
import { newSqsClient } from "./aws-mocks.ts";

const declaredQueues = app.queues;

/**
 * Queue controls against a real store (dynalite) with Lambda's event source mappings and SQS's
 * counts mocked: the order "record the intent, then change the mapping" is checked by reading the
 * item from inside the mocked Lambda call.
 */

const lambda = mockClient(LambdaClient);
const sqs = mockClient(SQSClient);
// The mocks patch the SDK classes themselves: put them back for the files that share this worker.
afterAll(() => {
  lambda.restore();
  sqs.restore();
});

const MAPPING = "esm-uuid-default";
const defaultQueue = declaredQueues[0] as QueueDeclaration;
/** A second queue with no event source mapping (e.g. drained by a pool, not by Lambda). */
const poolQueue: QueueDeclaration = { ...defaultQueue, name: "pool", maxConcurrency: 4 };
const queueUrls = new Map([
  ["default", "http://127.0.0.1:9/000000000000/default"],
  ["pool", "http://127.0.0.1:9/000000000000/pool"],
]);
const dlqUrls = new Map([
  ["default", "http://127.0.0.1:9/000000000000/default-dlq"],
  ["pool", "http://127.0.0.1:9/000000000000/pool-dlq"],
]);

let dynalite: RunningEmulator;
let tableCounter = 0;
let engine: Engine;
let admin: QueueAdmin;
let disposeDynamo: () => void;

beforeAll(async () => {
  dynalite = await startDynalite();
});
afterAll(async () => {
  await dynalite.stop();
});

beforeEach(async () => {
  lambda.reset();
  sqs.reset();
  const dynamodb = dynamoClient(dynalite.endpoint);
  disposeDynamo = () => dynamodb.destroy();
  tableCounter += 1;
  const table = `queue-controls-${process.pid}-${tableCounter}`;
  await provisionTable(dynamodb, table);
  const lambdaClient = new LambdaClient({
    region: "us-east-1",
    endpoint: "http://127.0.0.1:9",
    credentials: { accessKeyId: "unit", secretAccessKey: "unit" },
    maxAttempts: 1,
  });
  engine = buildEngine({
    durableRuns: openDurableRun,
    app: testApp({ queues: [defaultQueue, poolQueue] }),
    dynamodb,
    sqs: newSqsClient(),
    ...unreachableClaims(),
    table,
    queueUrls,
    dlqUrls,
    eventSources: new LambdaEventSourceControl(lambdaClient, new Map([["default", MAPPING]])),
    clock: new ManualClock(),
    metrics: new MemoryMetrics(),
    log: silentLog,
  });
  admin = new QueueAdmin(engine);
  // Depth: distinct numbers for the main queue and its DLQ.
  sqs.on(GetQueueAttributesCommand).callsFake((input: { QueueUrl: string }) => ({
    Attributes: input.QueueUrl.endsWith("-dlq")
      ? {
          ApproximateNumberOfMessages: "1",
          ApproximateNumberOfMessagesNotVisible: "0",
          ApproximateNumberOfMessagesDelayed: "1",
        }
      : {
          ApproximateNumberOfMessages: "7",
          ApproximateNumberOfMessagesNotVisible: "3",
          ApproximateNumberOfMessagesDelayed: "2",
        },
  }));
  // The mapping as Lambda reports it, unless a test says otherwise.
  lambda.on(GetEventSourceMappingCommand).resolves({
    UUID: MAPPING,
    State: "Enabled",
    ScalingConfig: { MaximumConcurrency: defaultQueue.maxConcurrency },
  });
  lambda.on(UpdateEventSourceMappingCommand).resolves({ UUID: MAPPING, State: "Updating" });
});

afterEach(() => {
  disposeDynamo();
  lambda.reset();
  sqs.reset();
});

const updates = (): UpdateEventSourceMappingCommandInput[] =>
  lambda.commandCalls(UpdateEventSourceMappingCommand).map((c) => c.args[0].input);

describe("pause, resume and patch drive the event source mapping", () => {
  test("pause records the intent first, then disables the mapping once at the effective concurrency", async () => {
    const seenByLambda: unknown[] = [];
    lambda.on(UpdateEventSourceMappingCommand).callsFake(async () => {
      // What the store held at the moment Lambda was called.
      seenByLambda.push((await getQueueState(engine.store, "default")).paused);
      return { UUID: MAPPING, State: "Updating" };
    });
    const view = await admin.pause("default");
    expect(view).toMatchObject({ name: "default", paused: true, maxConcurrency: 10 });
    expect(updates()).toEqual([
      { UUID: MAPPING, Enabled: false, ScalingConfig: { MaximumConcurrency: defaultQueue.maxConcurrency } },
    ]);
    expect(seenByLambda).toEqual([true]);
  });

  test("resume enables the mapping", async () => {
    await admin.pause("default");
    lambda.resetHistory();
    const view = await admin.resume("default");
    expect(view.paused).toBe(false);
    expect(updates()).toEqual([
      { UUID: MAPPING, Enabled: true, ScalingConfig: { MaximumConcurrency: defaultQueue.maxConcurrency } },
    ]);
    expect((await getQueueState(engine.store, "default")).paused).toBe(false);
  });

  test("patching maxConcurrency sets MaximumConcurrency and keeps Enabled as recorded", async () => {
    await admin.patch("default", { maxConcurrency: 50 });
    expect(updates()).toEqual([{ UUID: MAPPING, Enabled: true, ScalingConfig: { MaximumConcurrency: 50 } }]);

    await admin.pause("default");
    lambda.resetHistory();
    const view = await admin.patch("default", { maxConcurrency: 60 });
    expect(view).toMatchObject({ paused: true, maxConcurrency: 60 });
    expect(updates()).toEqual([{ UUID: MAPPING, Enabled: false, ScalingConfig: { MaximumConcurrency: 60 } }]);
    // A later pause/resume carries the stored concurrency, not the declared one.
    lambda.resetHistory();
    await admin.resume("default");
    expect(updates()).toEqual([{ UUID: MAPPING, Enabled: true, ScalingConfig: { MaximumConcurrency: 60 } }]);
  });

  test("a failed Lambda call leaves the intent recorded and propagates", async () => {
    const boom = new Error("lambda is down");
    lambda.on(UpdateEventSourceMappingCommand).rejects(boom);
    await expect(admin.pause("default")).rejects.toThrow("lambda is down");
    const state = await getQueueState(engine.store, "default");
    expect(state.paused).toBe(true);
    expect(updates()).toHaveLength(1);
  });

  test("a queue without a mapping changes its settings without calling Lambda", async () => {
    const paused = await admin.pause("pool");
    expect(paused).toMatchObject({ name: "pool", paused: true });
    expect(paused.eventSource).toBeUndefined();
    await admin.patch("pool", { maxConcurrency: 20 });
    await admin.resume("pool");
    expect(lambda.calls()).toHaveLength(0);
    expect(await getQueueState(engine.store, "pool")).toMatchObject({ paused: false, maxConcurrency: 20 });
  });

  test("a pool-tier queue refuses maxConcurrency: its children's soft/hard capacity is the limit", async () => {
    const tiered = new QueueAdmin({ ...engine, queues: [{ ...poolQueue, tier: "pool" }] });
    await expect(tiered.patch("pool", { maxConcurrency: 20 })).rejects.toMatchObject({
      code: "validation_error",
      issues: [{ path: "maxConcurrency", message: "not available on a pool-tier queue" }],
    });
    expect(await getQueueState(engine.store, "pool")).toEqual({});
    await tiered.patch("pool", { backoff: { maxSeconds: 60 } });
    expect(await getQueueState(engine.store, "pool")).toMatchObject({ backoffMaxSeconds: 60 });
  });
});

describe("repairEventSources", () => {
  test("a mapping Enabled while the recorded intent is paused is disabled again", async () => {
    lambda.on(UpdateEventSourceMappingCommand).rejects(new Error("throttled"));
    await expect(admin.pause("default")).rejects.toThrow("throttled");
    lambda.resetHistory();
    lambda.on(UpdateEventSourceMappingCommand).resolves({ UUID: MAPPING, State: "Updating" });
    // Lambda still reports the mapping as it was before the failed call.
    expect(await admin.repairEventSources()).toBe(1);
    expect(updates()).toEqual([
      { UUID: MAPPING, Enabled: false, ScalingConfig: { MaximumConcurrency: defaultQueue.maxConcurrency } },
    ]);
  });

  test("a different concurrency is repaired too", async () => {
    await setQueueConfig(engine.store, "default", { maxConcurrency: 25 });
    expect(await admin.repairEventSources()).toBe(1);
    expect(updates()).toEqual([{ UUID: MAPPING, Enabled: true, ScalingConfig: { MaximumConcurrency: 25 } }]);
  });

  test.each(["Updating", "Disabling", "Enabling", "Creating"])(
    "a mapping mid-change (%s) is left alone",
    async (state) => {
      await setQueueConfig(engine.store, "default", { paused: true });
      lambda.on(GetEventSourceMappingCommand).resolves({
        UUID: MAPPING,
        State: state,
        ScalingConfig: { MaximumConcurrency: 99 },
      });
      expect(await admin.repairEventSources()).toBe(0);
      expect(updates()).toEqual([]);
    },
  );

  test("a mapping that matches the intent is left alone", async () => {
    expect(await admin.repairEventSources()).toBe(0);
    await setQueueConfig(engine.store, "default", { paused: true, maxConcurrency: 30 });
    lambda.on(GetEventSourceMappingCommand).resolves({
      UUID: MAPPING,
      State: "Disabled",
      ScalingConfig: { MaximumConcurrency: 30 },
    });
    expect(await admin.repairEventSources()).toBe(0);
    expect(updates()).toEqual([]);
    // Only the mapped queue is ever described.
    expect(lambda.commandCalls(GetEventSourceMappingCommand).map((c) => c.args[0].input)).toEqual([
      { UUID: MAPPING },
      { UUID: MAPPING },
    ]);
  });
});

describe("the HTTP queue routes", () => {
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are asserted field by field.
  type Json = Record<string, any>;
  async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }> {
    const handler = createApiHandler(engine);
    const event = {
      version: "2.0",
      routeKey: apiRouteMatcher.find(method, path)?.routeKey,
      rawPath: path,
      rawQueryString: "",
      headers: { "content-type": "application/json" },
      requestContext: { http: { method, path, protocol: "HTTP/1.1", sourceIp: "127.0.0.1", userAgent: "" } },
      isBase64Encoded: false,
      ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
    } as unknown as HttpEvent;
    const res = await handler(event, {} as Context);
    return { status: res.statusCode ?? 0, body: JSON.parse(res.body ?? "null") as Json };
  }

  test("rejects invalid patches with 400 validation_error and changes nothing", async () => {
    const cases: [string, unknown][] = [
      ["below the minimum concurrency", { maxConcurrency: 1 }],
      ["above the maximum concurrency", { maxConcurrency: 1001 }],
      ["a fractional concurrency", { maxConcurrency: 2.5 }],
      ["an unknown field", { paused: true }],
      ["an unknown nested field", { backoff: { factor: 2 } }],
      ["an empty body", {}],
      ["an empty backoff", { backoff: {} }],
      ["an empty retention", { retentionDays: {} }],
      ["malformed JSON", "{not json"],
      ["not an object", "[1,2]"],
    ];
    for (const [what, body] of cases) {
      const r = await call("PATCH", "/queues/default", body);
      expect({ what, status: r.status, code: r.body.error?.code }).toEqual({
        what,
        status: 400,
        code: "validation_error",
      });
    }
    expect(lambda.commandCalls(UpdateEventSourceMappingCommand)).toHaveLength(0);
    expect(await getQueueState(engine.store, "default")).toEqual({});
  });

  test("a missing body is a 400", async () => {
    const r = await call("PATCH", "/queues/default");
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("validation_error");
  });

  test("backoff base above max is refused, also against the stored max", async () => {
    const both = await call("PATCH", "/queues/default", { backoff: { baseSeconds: 100, maxSeconds: 50 } });
    expect(both.status).toBe(400);
    expect(both.body.error).toMatchObject({
      code: "validation_error",
      message: "backoff.baseSeconds (100) must not exceed backoff.maxSeconds (50)",
    });
    // Against the declared max (3600).
    const declared = await call("PATCH", "/queues/default", { backoff: { baseSeconds: 3601 } });
    expect(declared.status).toBe(400);
    expect(declared.body.error.message).toContain("(3601) must not exceed backoff.maxSeconds (3600)");

    const lowered = await call("PATCH", "/queues/default", { backoff: { maxSeconds: 60 } });
    expect(lowered.status).toBe(200);
    expect(lowered.body.backoff).toEqual({ baseSeconds: 2, maxSeconds: 60 });
    // Against the stored max (60), not the declared one.
    const stored = await call("PATCH", "/queues/default", { backoff: { baseSeconds: 61 } });
    expect(stored.status).toBe(400);
    expect(stored.body.error.message).toBe(
      "backoff.baseSeconds (61) must not exceed backoff.maxSeconds (60)",
    );
    // Nor can the max go below the stored base.
    await call("PATCH", "/queues/default", { backoff: { baseSeconds: 30 } });
    const under = await call("PATCH", "/queues/default", { backoff: { maxSeconds: 10 } });
    expect(under.status).toBe(400);
    expect(under.body.error.message).toBe("backoff.baseSeconds (30) must not exceed backoff.maxSeconds (10)");
    expect((await getQueueState(engine.store, "default")).backoffMaxSeconds).toBe(60);
  });

  test("an unknown queue is 404 not_found on every route", async () => {
    for (const [method, path, body] of [
      ["PATCH", "/queues/nope", { maxConcurrency: 5 }],
      ["POST", "/queues/nope/pause", undefined],
      ["POST", "/queues/nope/resume", undefined],
    ] as const) {
      const r = await call(method, path, body);
      expect({ method, path, status: r.status, code: r.body.error?.code }).toEqual({
        method,
        path,
        status: 404,
        code: "not_found",
      });
    }
    expect(lambda.commandCalls(UpdateEventSourceMappingCommand)).toHaveLength(0);
  });

  test("a valid patch answers 200 with the new effective settings", async () => {
    const r = await call("PATCH", "/queues/default", {
      maxConcurrency: 50,
      retentionDays: { done: 3 },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      name: "default",
      paused: false,
      maxConcurrency: 50,
      retentionDays: { done: 3, dead: 30 },
      declared: { maxConcurrency: 10, retentionDays: { done: 7, dead: 30 } },
    });
    expect(updates()).toEqual([{ UUID: MAPPING, Enabled: true, ScalingConfig: { MaximumConcurrency: 50 } }]);
  });

  test("GET /queues shows effective settings, the paused flag, counts and the event source", async () => {
    expect((await call("POST", "/queues/default/pause")).body.paused).toBe(true);
    await call("PATCH", "/queues/default", { maxConcurrency: 40, backoff: { baseSeconds: 5 } });
    lambda.on(GetEventSourceMappingCommand).resolves({
      UUID: MAPPING,
      State: "Disabled",
      ScalingConfig: { MaximumConcurrency: 40 },
    });
    const r = await call("GET", "/queues");
    expect(r.status).toBe(200);
    const byName = new Map((r.body.items as Json[]).map((q) => [q.name, q]));
    expect(byName.get("default")).toMatchObject({
      paused: true,
      maxConcurrency: 40,
      backoff: { baseSeconds: 5, maxSeconds: 3600 },
      retentionDays: { done: 7, dead: 30 },
      declared: { maxConcurrency: 10, backoff: { baseSeconds: 2, maxSeconds: 3600 } },
      counts: { visible: 7, inFlight: 3, delayed: 2, dlq: 2 },
      eventSource: { enabled: false, maxConcurrency: 40, state: "Disabled" },
    });
    expect(byName.get("pool")).toMatchObject({
      paused: false,
      maxConcurrency: 4,
      counts: { visible: 7, inFlight: 3, delayed: 2, dlq: 2 },
    });
    expect(byName.get("pool")?.eventSource).toBeUndefined();
  });
});
