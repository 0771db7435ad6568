import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Message, SendMessageCommand } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { app } from "../../app/index.ts";
import { functionName, type LambdaHandler, lambdaHandlers } from "../../scripts/deploy/lambda-build.ts";
import type { RecordedCall } from "../support/aws-call-recorder.ts";
import { type BundleStack, type FunctionName, startBundleStack } from "../support/lambda-bundle-stack.ts";
import {
  type HttpRequest,
  httpApiEvent,
  schedulerEvent,
  sqsEvent,
  sqsRecord,
  sstCronInput,
  unauthenticatedHttpApiEvent,
} from "../support/lambda-events.ts";

/**
 * Issue 16, part 2: every Lambda bundle, built exactly as SST builds it (scripts/deploy/lambda-build.ts),
 * loaded in a fresh Node 24 process with only the environment infra declares for it (evaluated from
 * sst.config.ts), fed the events AWS sends it, against fauxqs and dynalite behind a recording proxy.
 * Every AWS call a bundle makes is checked against the permissions infra grants that function.
 * LAMBDA_BUNDLES_REPORT=1 prints each function's size, init time and calls; =logs adds its log.
 */
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** The cold-start budget infra/function-defaults.ts names for a bundle without the SDK. */
const BUNDLE_BUDGET_BYTES = 400 * 1024;
const INVOKE_BOUND_MS = 20_000;
const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

let stack: BundleStack;

beforeAll(async () => {
  stack = await startBundleStack(ROOT);
}, 60_000);

afterAll(async () => {
  if (stack && process.env.LAMBDA_BUNDLES_REPORT) {
    if (process.env.LAMBDA_BUNDLES_REPORT === "logs")
      for (const name of ["enqueue", "api", "worker", "reaper", "cleanup", "cron"] as const)
        console.log(stack.fn(name).process.log());
    console.log(stack.report());
  }
  await stack?.stop();
});

/**
 * Invokes one bundle and checks, before anything else, that every AWS call it made was one its
 * infra permissions allow. A function error fails the test with the function's last log lines.
 */
async function invoke<T = unknown>(
  name: FunctionName,
  event: unknown,
): Promise<{ payload: T; calls: RecordedCall[] }> {
  const { answer, calls, uncovered } = await stack.invoke(name, event, INVOKE_BOUND_MS);
  expect(uncovered, `${name} made calls its grants don't allow`).toEqual([]);
  if (!answer.ok) {
    const log = stack.fn(name).process.log().split("\n").slice(-10).join("\n");
    throw new Error(`${name} failed: ${answer.error.errorType}: ${answer.error.errorMessage}\n${log}`);
  }
  return { payload: answer.payload as T, calls };
}

const operations = (calls: RecordedCall[]) => new Set(calls.map((c) => `${c.service}:${c.operation}`));

interface HttpAnswer {
  statusCode: number;
  headers?: Record<string, string>;
  body?: string;
}

async function http(req: HttpRequest) {
  const { payload, calls } = await invoke<HttpAnswer>("api", httpApiEvent(req));
  return { ...payload, json: payload.body ? JSON.parse(payload.body) : undefined, calls };
}

const defaultQueue = () =>
  stack.deployed.queues.get("default") as { url: string; arn: string; dlqUrl: string; dlqArn: string };

describe("every bundle, run as Lambda runs it", () => {
  test("each handler bundles as SST builds it and inits in a fresh Node 24 process on infra's environment alone", async () => {
    // The builder's list and infra's functions are the same nine handlers, on the runtime it targets.
    expect(new Set(stack.declared.map((d) => d.handler))).toEqual(new Set<string>(lambdaHandlers));
    for (const handler of lambdaHandlers as readonly LambdaHandler[]) {
      const f = stack.fn(functionName(handler) as FunctionName);
      expect(f.declared.runtime).toBe("nodejs24.x");
      expect(f.built.file).toBe(join(stack.outDir, `${handler.slice(0, handler.lastIndexOf("."))}.mjs`));
      // The realtime authorizer holds no app and zod's mini build only (about 30 KB).
      const floor = functionName(handler) === "realtime-authorizer" ? 10_000 : 50_000;
      expect(f.built.bytes, handler).toBeGreaterThan(floor);
      expect(f.built.bytes, handler).toBeLessThan(BUNDLE_BUDGET_BYTES);
      expect(f.process.nodeVersion, handler).toMatch(/^v24\./);
      // The SDK stays outside the bundle, imported from the runtime (here, the project's node_modules).
      const source = await readFile(f.built.file, "utf8");
      // The realtime authorizer builds no engine: the one client it loads is SSM's, on first use.
      expect(source, handler).toMatch(
        handler.includes("realtime-authorizer")
          ? /import\("@aws-sdk\/client-ssm"\)/
          : /from\s*"@aws-sdk\/client-dynamodb"/,
      );
      expect(source, handler).not.toContain("DynamoDB_20120810");
      // Building the engine at init sends nothing.
      expect(f.recorder.take(), handler).toEqual([]);
    }
  });

  test("enqueue answers a direct Invoke of one request, of { jobs }, and a caller's mistake as { error }", async () => {
    const one = await invoke<Record<string, unknown>>("enqueue", {
      kind: "echo",
      payload: { hello: "lambda" },
    });
    expect(one.payload).toMatchObject({ kind: "echo", queue: "default", status: "queued", duplicate: false });
    expect(one.payload.id).toMatch(ULID);
    // The hot path's requests exactly (docs/architecture.md §11): one message, one item write.
    expect(operations(one.calls)).toEqual(new Set(["sqs:SendMessage", "dynamodb:PutItem"]));

    const batch = await invoke<{ results: unknown[] }>("enqueue", {
      jobs: [{ kind: "echo", payload: 1 }, { kind: "no-such-kind" }, { kind: "echo", payload: 2 }],
    });
    expect(batch.payload.results).toEqual([
      { index: 0, id: expect.stringMatching(ULID), duplicate: false },
      { index: 1, error: expect.objectContaining({ code: "unknown_kind" }) },
      { index: 2, id: expect.stringMatching(ULID), duplicate: false },
    ]);
    expect(operations(batch.calls)).toContain("sqs:SendMessageBatch");

    const bad = await invoke("enqueue", { kind: "echo", payload: 1, maxAttempts: 0 });
    expect(bad.payload).toEqual({
      error: expect.objectContaining({ code: "validation_error", issues: expect.any(Array) }),
    });
    expect(bad.calls).toEqual([]);
  });

  test("worker answers an SQS batch with a partial batch response naming only the record whose job failed", async () => {
    const { payload } = await invoke<{ results: { id: string }[] }>("enqueue", {
      jobs: [
        { kind: "echo", payload: { n: 1 } },
        { kind: "fail", payload: { message: "failed in the bundle" } },
      ],
    });
    const [good, bad] = payload.results.map((r) => r.id) as [string, string];
    const queue = defaultQueue();
    const received = await stack.receiveJobs(queue.url, [good, bad]);
    const goodMessage = received.get(good) as Message;
    const badMessage = received.get(bad) as Message;
    const event = sqsEvent([sqsRecord(goodMessage, queue.arn), sqsRecord(badMessage, queue.arn)]);
    expect(event.Records[0]?.attributes.ApproximateReceiveCount).toBe("1");

    const { payload: response, calls } = await invoke("worker", event);
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: badMessage.MessageId }] });
    // The hot path's requests exactly (§11): the queue config read (cached), claim and finalize
    // updates, one batched hide, and (batched too, after the runs) the failed attempt's message set
    // to wait out its backoff.
    expect(operations(calls)).toEqual(
      new Set(["dynamodb:GetItem", "dynamodb:UpdateItem", "sqs:ChangeMessageVisibilityBatch"]),
    );
    expect(calls.filter((c) => c.operation === "ChangeMessageVisibilityBatch")).toHaveLength(2);

    const done = await http({ method: "GET", route: "/jobs/{id}", path: `/jobs/${good}` });
    expect(done.statusCode).toBe(200);
    expect(done.json).toMatchObject({ id: good, status: "done", attempts: 1, result: { n: 1 } });
    const retrying = await http({ method: "GET", route: "/jobs/{id}", path: `/jobs/${bad}` });
    expect(retrying.json).toMatchObject({
      id: bad,
      status: "queued",
      attempts: 1,
      lastError: "failed in the bundle",
    });
    // Each attempt names its run: the worker function and Lambda's request id for the invocation.
    const runner = /^lambda:[\w-]+\/[0-9a-f-]{36}$/;
    expect(done.json.history).toEqual([
      expect.objectContaining({ attempt: 1, outcome: "done", runner: expect.stringMatching(runner) }),
    ]);
    expect(retrying.json.history).toEqual([
      expect.objectContaining({
        attempt: 1,
        outcome: "retry",
        error: "failed in the bundle",
        runner: expect.stringMatching(runner),
      }),
    ]);
  });

  test("a payload and a result over 8 KiB go through the claims bucket, each call within the function's grants", async () => {
    const big = { blob: "b".repeat(100_000) };
    const { payload: job, calls: enqueueCalls } = await invoke<{ id: string }>("enqueue", {
      kind: "echo",
      payload: big,
    });
    const put = enqueueCalls.filter((c) => c.service === "s3");
    expect(put.map((c) => [c.operation, c.status])).toEqual([["PutObject", 200]]);
    expect(put[0]?.target).toEqual({
      bucket: stack.deployed.claims.name,
      key: expect.stringMatching(new RegExp(`^claims/\\d+d/${job.id}/payload$`)),
    });
    const queue = defaultQueue();
    const received = await stack.receiveJobs(queue.url, [job.id]);
    const message = received.get(job.id) as Message;
    // The message carries the key, not the 100 KB.
    expect((message.Body ?? "").length).toBeLessThan(1024);
    const { payload: response, calls } = await invoke("worker", sqsEvent([sqsRecord(message, queue.arn)]));
    expect(response).toEqual({ batchItemFailures: [] });
    // The payload read after the claim, the echoed result written before the finalize.
    expect(calls.filter((c) => c.service === "s3").map((c) => c.operation)).toEqual([
      "GetObject",
      "PutObject",
    ]);
    const done = await http({ method: "GET", route: "/jobs/{id}", path: `/jobs/${job.id}` });
    expect(done.json).toMatchObject({ id: job.id, status: "done", payload: big, result: big });
    expect(operations(done.calls)).toContain("s3:GetObject");
  });

  test("api answers API Gateway v2 events (IAM auth, base64 bodies) with the documented status, content type and JSON", async () => {
    // The same request twice: the second answers the first's job.
    const enqueueOnce = () =>
      http({
        method: "POST",
        route: "/jobs",
        path: "/jobs",
        json: { kind: "echo", payload: { via: "http" }, uniqueKey: "bundle-1" },
      });
    const created = await enqueueOnce();
    expect(created.statusCode).toBe(201);
    expect(created.headers?.["content-type"]).toBe("application/json");
    expect(created.json).toMatchObject({
      kind: "echo",
      status: "queued",
      duplicate: false,
      payload: { via: "http" },
    });
    const again = await enqueueOnce();
    expect(again.statusCode).toBe(200);
    expect(again.json).toMatchObject({ id: created.json.id, duplicate: true });

    const unknown = await http({
      method: "POST",
      route: "/jobs",
      path: "/jobs",
      json: { kind: "no-such-kind" },
    });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.headers?.["content-type"]).toBe("application/json");
    expect(unknown.json).toEqual({
      error: expect.objectContaining({ code: "unknown_kind", message: expect.any(String) }),
    });
    const invalid = await http({
      method: "POST",
      route: "/jobs",
      path: "/jobs",
      json: { kind: "echo", payload: 1, delaySeconds: -1 },
    });
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json.error).toMatchObject({ code: "validation_error", issues: expect.any(Array) });
    const missing = await http({ method: "GET", route: "/jobs/{id}", path: "/jobs/not-a-job" });
    expect(missing.statusCode).toBe(404);
    expect(missing.json.error.code).toBe("not_found");
    // Deployed, API Gateway answers a method no route takes itself (there is no $default route); a
    // hand-made event under $default runs no route: 405 naming the methods, or 404.
    const wrongMethod = await http({ method: "DELETE", route: "$default", path: "/health" });
    expect(wrongMethod.statusCode).toBe(405);
    expect(wrongMethod.headers?.allow).toMatch(/GET/);
    const underDefault = await http({ method: "GET", route: "$default", path: "/health" });
    expect(underDefault.statusCode).toBe(404);

    const dead = await http({
      method: "GET",
      route: "/jobs",
      path: "/jobs",
      query: "queue=default&status=dead",
    });
    expect(dead.statusCode).toBe(200);
    expect(dead.calls.some((c) => c.operation === "Query" && c.target.indexName)).toBe(true);

    const listed = await http({ method: "GET", route: "/queues", path: "/queues" });
    expect(listed.statusCode).toBe(200);
    const byName = new Map((listed.json.items as { name: string }[]).map((q) => [q.name, q]));
    expect(byName.get("default")).toMatchObject({
      paused: false,
      eventSource: { enabled: true, state: "Enabled" },
    });
    expect(byName.get("heavy")).not.toHaveProperty("eventSource");
    expect(operations(listed.calls)).toContain("lambda:GetEventSourceMapping");

    const mapping = stack.deployed.eventSourceMappings.get("default")?.uuid as string;
    const paused = await http({
      method: "POST",
      route: "/queues/{name}/pause",
      path: "/queues/default/pause",
    });
    expect(paused.statusCode).toBe(200);
    expect(paused.json).toMatchObject({ name: "default", paused: true });
    expect(stack.mappings.state.get(mapping)?.enabled).toBe(false);
    expect(operations(paused.calls)).toContain("lambda:UpdateEventSourceMapping");
    const resumed = await http({
      method: "POST",
      route: "/queues/{name}/resume",
      path: "/queues/default/resume",
    });
    expect(resumed.json).toMatchObject({ name: "default", paused: false });
    expect(stack.mappings.state.get(mapping)?.enabled).toBe(true);
  });

  test("reaper, cleanup and cron complete on the input SST's CronV2 sends ({}) and on Scheduler's default event", async () => {
    // A job whose message reached the DLQ (as SQS's redrive would move it), and a mapping that
    // drifted from the recorded queue state: the reaper dead-letters the one and repairs the other.
    const { payload: job } = await invoke<{ id: string }>("enqueue", { kind: "echo", payload: "to the dlq" });
    const queue = defaultQueue();
    const message = (await stack.receiveJobs(queue.url, [job.id])).get(job.id) as Message;
    await stack.sqs.send(
      new SendMessageCommand({ QueueUrl: queue.dlqUrl, MessageBody: message.Body as string }),
    );
    const mapping = stack.mappings.state.get(
      stack.deployed.eventSourceMappings.get("default")?.uuid as string,
    );
    if (mapping) mapping.enabled = false;

    const reaped = await invoke<Record<string, number>>("reaper", sstCronInput());
    expect(reaped.payload).toMatchObject({ deadLettered: 1, eventSourcesRepaired: 1 });
    expect(mapping?.enabled).toBe(true);
    for (const op of [
      "sqs:ReceiveMessage",
      "sqs:DeleteMessage",
      "dynamodb:Query",
      "lambda:UpdateEventSourceMapping",
    ])
      expect(operations(reaped.calls), op).toContain(op);
    const deadJob = await http({ method: "GET", route: "/jobs/{id}", path: `/jobs/${job.id}` });
    expect(deadJob.json).toMatchObject({ id: job.id, status: "dead" });
    const again = await invoke<Record<string, number>>("reaper", schedulerEvent("reaper"));
    expect(again.payload).toMatchObject({ promoted: 0, deadLettered: 0, eventSourcesRepaired: 0 });

    for (const event of [sstCronInput(), schedulerEvent("cleanup")]) {
      const cleaned = await invoke<Record<string, number>>("cleanup", event);
      // The dead job is inside its 30-day retention; TTL, not a sweep, removes the rest on AWS.
      expect(cleaned.payload).toEqual({
        purgedDead: 0,
        purgedDone: 0,
        purgedCancelled: 0,
        purgedExpired: 0,
        swept: 0,
      });
    }

    const first = await invoke<Record<string, unknown>>("cron", sstCronInput());
    expect(first.payload).toMatchObject({ leader: true, schedules: app.schedules.length });
    const second = await invoke<Record<string, unknown>>("cron", schedulerEvent("cron"));
    expect(second.payload).toMatchObject({ leader: true, schedules: app.schedules.length });
    const schedules = await http({ method: "GET", route: "/schedules", path: "/schedules" });
    expect((schedules.json.items as { name: string }[]).map((s) => s.name)).toEqual(
      app.schedules.map((s) => s.name),
    );
  });

  test("the token callback completes a durable job's token, unsigned, touching only tok# and job# items; any other route is a 404", async () => {
    const { payload: job } = await invoke<{ id: string }>("enqueue", {
      kind: "onboard",
      payload: { user: "bundle", sleepSeconds: 0 },
    });
    const queue = defaultQueue();
    const first = (await stack.receiveJobs(queue.url, [job.id])).get(job.id) as Message;
    const run = await invoke("worker", sqsEvent([sqsRecord(first, queue.arn)]));
    expect(run.payload).toEqual({ batchItemFailures: [] });
    const steps = await http({ method: "GET", route: "/jobs/{id}/steps", path: `/jobs/${job.id}/steps` });
    expect(steps.json).toMatchObject({ status: "scheduled", waiting: { for: "token" } });
    const approval = (steps.json.steps as { name: string; result?: { id: string; url: string } }[]).find(
      (s) => s.name === "approval",
    )?.result as { id: string; url: string };
    // The worker's SKYFORGE_API_URL, as infra sets it from the API's URL: the url is the deployed route's.
    const url = new URL(approval.url);
    const apiUrl = stack.fn("worker").declared.environment.SKYFORGE_API_URL ?? "";
    expect(apiUrl).toMatch(/^https:\/\/\w+\.execute-api\./);
    expect(url.origin).toBe(new URL(apiUrl).origin);
    expect(url.pathname).toBe(`/tokens/${approval.id}`);

    const complete = (query: string, data: unknown) =>
      invoke<HttpAnswer>(
        "token-callback",
        unauthenticatedHttpApiEvent({ method: "POST", path: url.pathname, query, json: { data } }),
      );
    const wrong = await complete("secret=nope", { ok: false });
    expect(wrong.payload.statusCode).toBe(403);
    // Data over 8 KiB: kept as the token's object, the one kind the callback may write.
    const note = "n".repeat(9000);
    const done = await complete(url.search.slice(1), { ok: true, note });
    expect(done.payload.statusCode).toBe(200);
    expect(JSON.parse(done.payload.body ?? "")).toMatchObject({ jobId: job.id, resumed: true });
    // Its role's list (lib/deploy-plan/grants.ts "token-callback": dynamodb:LeadingKeys tok#* and
    // job#*, a token's and a job's updates each held to its attributes with nothing returned, the
    // token objects): every call is checked against it with its conditions (invoke, above).
    expect([...operations(done.calls)].sort()).toEqual([
      "dynamodb:GetItem",
      "dynamodb:UpdateItem",
      "s3:PutObject",
      "sqs:SendMessage",
    ]);
    for (const call of [...wrong.calls, ...done.calls].filter((c) => c.service === "dynamodb"))
      expect(call.target.partitionKey, call.operation).toMatch(/^(tok|job)#/);
    const updates = done.calls.filter((c) => c.operation === "UpdateItem");
    expect(updates.map((c) => [c.target.partitionKey?.split("#")[0], c.target.returnValues])).toEqual([
      ["tok", "NONE"],
      ["job", "NONE"],
    ]);
    expect(done.calls.find((c) => c.service === "s3")?.target.key).toMatch(
      new RegExp(`^claims/\\d+d/${job.id}/token-${approval.id}-[\\w-]{12}$`),
    );
    expect((await complete(url.search.slice(1), { ok: true })).payload.statusCode).toBe(409);

    // Any other route, even one API Gateway would send it by mistake, is a 404 that reads nothing.
    const other = await invoke<HttpAnswer>("token-callback", httpApiEvent({ method: "GET", path: "/jobs" }));
    expect(other.payload.statusCode).toBe(404);
    expect(JSON.parse(other.payload.body ?? "")).toMatchObject({ error: { code: "not_found" } });
    expect(other.calls).toEqual([]);
    const resumed = (await stack.receiveJobs(queue.url, [job.id])).get(job.id) as Message;
    const rerun = await invoke("worker", sqsEvent([sqsRecord(resumed, queue.arn)]));
    expect(rerun.payload).toEqual({ batchItemFailures: [] });
    const after = await http({ method: "GET", route: "/jobs/{id}", path: `/jobs/${job.id}` });
    expect(after.json).toMatchObject({
      status: "done",
      result: { user: "bundle", approval: { ok: true, note } },
    });
  });

  test("no bundle logged an error, and no SDK client warned it sent elsewhere than its endpoint", () => {
    for (const handler of lambdaHandlers) {
      const name = functionName(handler);
      const lines = stack
        .fn(name as FunctionName)
        .process.log()
        .split("\n");
      expect(
        lines.filter((l) => /"level":"(ERROR|CRITICAL)"|differs from SQSClient|Error:/.test(l)),
        name,
      ).toEqual([]);
    }
  });
});
