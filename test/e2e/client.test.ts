import type { LambdaClient } from "@aws-sdk/client-lambda";
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from "vitest";
import { app } from "../../app/index.ts";
import { createClient } from "../../client/create-client.ts";
import { isSkyforgeApiError, SkyforgeApiError, SkyforgeTransportError } from "../../client/errors.ts";
import { httpTransport } from "../../client/http-transport.ts";
import { invokeTransport } from "../../client/invoke-transport.ts";
import type { EnqueueItem, SkyforgeClient } from "../../client/skyforge-client.ts";
import type { ApiRequest, Transport } from "../../client/transport.ts";
import type { JobView } from "../../lib/job/schemas.ts";
import { localLambdaClient } from "../support/local-stack-process.ts";
import { localStackForFile } from "../support/stack-for-file.ts";
import { waitFor } from "../support/wait.ts";

/**
 * The producer client against the stack `npm start` runs (local/stack.ts over app/, started in this
 * process: what is under test is the client, not the command), through both transports: the SigV4
 * HTTP API and Lambda Invoke of the API function. Every state is awaited as an event, with a bound.
 */

type App = typeof app;

const stack = localStackForFile({ app });
let lambda: LambdaClient;
beforeAll(() => {
  lambda = localLambdaClient(stack().url);
});
afterAll(() => {
  lambda?.destroy();
});

/** A transport that records what it sends, so a test can count requests (or see that none went). */
function recording(make: () => Transport) {
  const inner = make();
  const sent: ApiRequest[] = [];
  const transport: Transport = {
    send: (request) => {
      sent.push(request);
      return inner.send(request);
    },
  };
  return { sent, transport };
}

const transports: [string, () => Transport][] = [
  ["http (SigV4)", () => httpTransport({ url: stack().url })],
  ["invoke (Lambda)", () => invokeTransport({ functionName: "api", lambda })],
];

/** The error a call throws; fails the test when it resolves. */
async function failure(call: Promise<unknown>): Promise<unknown> {
  try {
    await call;
  } catch (err) {
    return err;
  }
  throw new Error("expected the call to fail");
}

async function apiError(call: Promise<unknown>): Promise<SkyforgeApiError> {
  const err = await failure(call);
  if (!(err instanceof SkyforgeApiError)) throw err;
  return err;
}

describe.each(transports)("the client through %s", (via, transport) => {
  let client: SkyforgeClient<App>;
  let sent: ApiRequest[];
  const tag = via.split(" ")[0] as string;
  const status = (id: string, wanted: JobView["status"]) =>
    waitFor(async () => {
      const job = await client.get(id);
      return job.status === wanted && job;
    }, `job ${id} to be ${wanted}`);

  beforeAll(() => {
    const r = recording(transport);
    sent = r.sent;
    client = createClient<App>({ transport: r.transport });
  });

  it("enqueues a kind and sees it done", async () => {
    const { job, duplicate } = await client.enqueue("echo", { via: tag });
    expect(duplicate).toBe(false);
    expect(job).toMatchObject({ kind: "echo", queue: "default", status: "queued" });
    const done = await status(job.id, "done");
    expect(done.result).toEqual({ via: tag });

    const again = await client.enqueue(
      "echo",
      { via: tag },
      { uniqueKey: `client-${tag}-${job.id}`, delaySeconds: 3600 },
    );
    const dup = await client.enqueue("echo", { other: 1 }, { uniqueKey: `client-${tag}-${job.id}` });
    expect(dup).toMatchObject({ duplicate: true, job: { id: again.job.id } });
  });

  it("enqueues 250 jobs in 3 requests, one result per job in the caller's numbering", async () => {
    const jobs: EnqueueItem<App>[] = Array.from({ length: 250 }, (_, n) => ({
      kind: "echo",
      payload: { n },
    }));
    jobs[137] = { kind: "flaky", payload: { failTimes: "twice" } } as unknown as EnqueueItem<App>;
    const before = sent.length;
    const results = await client.enqueueMany(jobs);
    expect(sent.slice(before).map((r) => `${r.method} ${r.path}`)).toEqual(Array(3).fill("POST /jobs/batch"));
    expect(results.map((r) => r.index)).toEqual(jobs.map((_, i) => i));
    expect(results[137]?.error).toMatchObject({
      code: "validation_error",
      issues: [{ path: "payload.failTimes" }],
    });
    expect(results.filter((r) => r.error)).toHaveLength(1);
    for (const n of [0, 99, 100, 136, 138, 199, 200, 249]) {
      const job = await client.get(results[n]?.id as string);
      expect(job.payload).toEqual({ n });
    }
    await status(results[249]?.id as string, "done");
  });

  it("lists a status page by page with the cursor", async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 3; i++) ids.add((await client.enqueue("echo", i, { delaySeconds: 3600 })).job.id);
    const first = await client.list({ queue: "default", status: "scheduled", limit: 2 });
    expect(first.items).toHaveLength(2);
    expect(first.cursor).toEqual(expect.any(String));
    const seen = first.items.map((j) => j.id);
    for (let cursor = first.cursor; cursor; ) {
      const page = await client.list({ queue: "default", status: "scheduled", limit: 2, cursor });
      seen.push(...page.items.map((j) => j.id));
      cursor = page.cursor;
    }
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(expect.arrayContaining([...ids]));
    for (const id of ids) await client.cancel(id);
  });

  it("lists jobs as summaries, without payload or result; an unknown view is a 400", async () => {
    // Over the inline size, so the full view reads the payload's own item and the summary must not.
    const payload = { via: tag, text: "x".repeat(1_000) };
    const { job } = await client.enqueue("echo", payload);
    await status(job.id, "done");
    /** Walks the done jobs of the default queue (a scan: pages may come short) to the job. */
    async function listed<V extends "full" | "summary">(view: V) {
      for (let cursor: string | undefined, calls = 0; calls < 200; calls++) {
        const page = await client.list({ queue: "default", status: "done", limit: 100, view, cursor });
        const found = page.items.find((j) => j.id === job.id);
        if (found || !page.cursor) return found;
        cursor = page.cursor;
      }
      return undefined;
    }
    const summary = await listed("summary");
    expect(summary).toMatchObject({ id: job.id, kind: "echo", status: "done", attempts: 1 });
    expect(summary).toHaveProperty("finishedAt");
    expect(summary).not.toHaveProperty("payload");
    expect(summary).not.toHaveProperty("result");
    // The types say so too: a summary's payload and result are undefined, a full view's are data.
    expectTypeOf((await client.list({ view: "summary" })).items[0]?.payload).toEqualTypeOf<undefined>();
    expectTypeOf((await client.list()).items[0]?.payload).toEqualTypeOf<unknown>();
    expect(await listed("full")).toMatchObject({ id: job.id, payload, result: payload });

    const bad = await apiError(client.list({ view: "payloads" as never }));
    expect(bad).toMatchObject({ status: 400, code: "validation_error", issues: [{ path: "view" }] });
  });

  it("cancels a job, once", async () => {
    const { job } = await client.enqueue("echo", null, { delaySeconds: 3600 });
    expect(await client.cancel(job.id)).toMatchObject({
      id: job.id,
      status: "cancelled",
      cancel: "cancelled",
    });
    expect(await client.cancel(job.id)).toMatchObject({ cancel: "already_cancelled" });
  });

  it("retries a dead job", async () => {
    const { job } = await client.enqueue("fail", { message: `dies via ${tag}` }, { maxAttempts: 1 });
    const dead = await status(job.id, "dead");
    expect(dead.lastError).toContain(`dies via ${tag}`);
    const retried = await client.retry(job.id);
    expect(retried).toMatchObject({ id: job.id, status: "queued", attempts: 0 });
    await waitFor(async () => (await client.get(job.id)).attempts === 1, "the retried job to run again");
  });

  it("durable jobs: steps, a token completed from its url, an event sent (docs/guide/durable-jobs.md)", async () => {
    const user = `client-${tag}-${Date.now()}`;
    const { job } = await client.enqueue("onboard", { user, sleepSeconds: 0 });
    const waiting = await waitFor(async () => {
      const s = await client.steps(job.id);
      return s.waiting?.for === "token" && s;
    }, `job ${job.id} to wait for its token`);
    const tokenStep = waiting.steps.find((s) => s.type === "token");
    const token = tokenStep?.result as { id: string; url: string };
    expect(token.id).toBe(waiting.waiting?.token);
    expect(await client.token(token.id)).toMatchObject({
      jobId: job.id,
      step: "approval",
      status: "pending",
    });
    expect(await apiError(client.completeToken(token.id, 1))).toMatchObject({
      status: 403,
      code: "forbidden",
    });
    expect(await client.completeToken(token.url, { approved: tag })).toMatchObject({
      id: token.id,
      jobId: job.id,
      status: "completed",
    });
    expect((await status(job.id, "done")).result).toMatchObject({ user, approval: { approved: tag } });
    expect((await client.steps(job.id)).steps.map((s) => s.name)).toEqual([
      "create-account",
      "cool-off",
      "approval",
      "send-welcome",
    ]);

    const order = `order-${tag}-${job.id}`;
    const flow = (await client.enqueue("order-flow", { order })).job;
    await waitFor(async () => (await client.get(flow.id)).waiting?.for === "event", "the order to wait");
    expect(await client.sendEvent("order.paid", order, { paid: tag })).toEqual({ resumed: 1 });
    expect((await status(flow.id, "done")).result).toEqual({ order, paid: { paid: tag } });
    expect(await apiError(client.sendEvent("", order))).toMatchObject({
      status: 400,
      code: "validation_error",
    });
  });

  it("lists, pauses, resumes and updates queues", async () => {
    const names = (await client.queues.list()).map((q) => q.name);
    expect(names).toEqual(expect.arrayContaining(["default", "heavy"]));
    expect(await client.queues.pause("heavy")).toMatchObject({ name: "heavy", paused: true });
    expect((await client.queues.list()).find((q) => q.name === "heavy")?.paused).toBe(true);
    expect(await client.queues.resume("heavy")).toMatchObject({ name: "heavy", paused: false });
    const updated = await client.queues.update("default", { maxConcurrency: 5, backoff: { baseSeconds: 3 } });
    expect(updated).toMatchObject({ maxConcurrency: 5, backoff: { baseSeconds: 3 } });
    await client.queues.update("default", { maxConcurrency: 10, backoff: { baseSeconds: 2 } });
  });

  it("puts, lists and removes a schedule", async () => {
    const name = `client-${tag}`;
    const schedule = { cron: "0 0 1 1 *", kind: "flaky", payload: { failTimes: 0 }, enabled: false } as const;
    expect(await client.schedules.put(name, schedule)).toMatchObject({ name, kind: "flaky", source: "api" });
    expect(await client.schedules.put(name, { ...schedule, cron: "0 0 2 1 *" })).toMatchObject({
      cron: "0 0 2 1 *",
    });
    expect((await client.schedules.list()).map((s) => s.name)).toContain(name);
    await client.schedules.remove(name);
    expect((await client.schedules.list()).map((s) => s.name)).not.toContain(name);
  });

  it("fans out a group, adds to it, seals it, pages its children, and cancels another", async () => {
    const id = `client-group-${tag}`;
    const created = await client.groups.create({
      id,
      children: [{ kind: "score-row", payload: { row: 1 } }],
      onComplete: { kind: "write-report", payload: { title: tag } },
      sealed: false,
    });
    expect(created).toMatchObject({ id, status: "open", duplicate: false, counts: { total: 1 } });
    expect(
      await client.groups.add(id, [{ kind: "score-row", payload: { row: 2 } }], { seal: true }),
    ).toMatchObject({
      status: "sealed",
      counts: { total: 2 },
    });
    const done = await waitFor(async () => {
      const g = await client.groups.get(id);
      return g.status === "succeeded" && g;
    }, `group ${id} to succeed`);
    const page = await client.groups.children(id, { limit: 1 });
    expect(page.items).toHaveLength(1);
    const rest = await client.groups.children(id, {
      limit: 1,
      ...(page.cursor ? { cursor: page.cursor } : {}),
    });
    expect([...page.items, ...rest.items].map((c) => c.result)).toEqual([
      { row: 1, score: 7 },
      { row: 2, score: 4 },
    ]);
    const report = await client.get(done.completionJobId ?? "");
    expect(report.result).toMatchObject({ title: tag, rows: 2, total: 11 });

    const other = await client.groups.create({
      children: [{ kind: "sleep", payload: { ms: 600_000 } }],
      onComplete: { kind: "write-report", payload: { title: "never" } },
    });
    expect(await client.groups.cancel(other.id)).toMatchObject({ status: "cancelled" });
    expect((await apiError(client.groups.seal("no-such-group"))).code).toBe("not_found");
  });

  it("brings the API's errors back typed, with its codes", async () => {
    const missing = await apiError(client.get("01ARZ3NDEKTSV4RRFFQ69G5FAV"));
    expect(missing).toMatchObject({ status: 404, code: "not_found", raisedBy: "api" });
    expect(isSkyforgeApiError(await failure(client.get("not/a ulid")), "not_found")).toBe(true);
    expect(await apiError(client.schedules.remove(`never-${tag}`))).toMatchObject({
      status: 404,
      code: "not_found",
    });

    const { job } = await client.enqueue("echo", "done soon");
    await status(job.id, "done");
    expect(await apiError(client.cancel(job.id))).toMatchObject({ status: 409, code: "conflict" });
    expect(await apiError(client.retry(job.id))).toMatchObject({ status: 409, code: "conflict" });
    expect(await apiError(client.schedules.remove("heartbeat-echo"))).toMatchObject({ status: 409 });

    const bad = await apiError(client.enqueue("flaky", { failTimes: "x" } as never));
    expect(bad).toMatchObject({
      status: 400,
      code: "validation_error",
      issues: [{ path: "payload.failTimes" }],
    });
    expect(await apiError(client.enqueue("nope" as never, {} as never))).toMatchObject({
      status: 400,
      code: "unknown_kind",
    });
    expect(await apiError(client.queues.update("default", { maxConcurrency: 1 }))).toMatchObject({
      status: 400,
      code: "validation_error",
    });
    expect(await apiError(client.list({ cursor: "not a cursor" }))).toMatchObject({
      code: "validation_error",
    });
  });

  it("refuses a bad payload before sending, with the error the API gives", async () => {
    const r = recording(transport);
    const checked = createClient({ app, transport: r.transport });
    const cases: [string, unknown][] = [
      ["flaky", { failTimes: "x" }],
      ["flakey", {}],
      ["echo", undefined],
    ];
    for (const [kind, payload] of cases) {
      const options = kind === "echo" ? { queue: "defualt" } : {};
      const local = await apiError(checked.enqueue(kind as never, payload as never, options as never));
      expect(local.raisedBy).toBe("client");
      const remote = await apiError(client.enqueue(kind as never, payload as never, options as never));
      expect({ ...local.toBody(), status: local.status }).toEqual({
        ...remote.toBody(),
        status: remote.status,
      });
    }
    expect(r.sent).toEqual([]);

    const results = await checked.enqueueMany([
      { kind: "echo", payload: 1 },
      { kind: "flaky", payload: { failTimes: -1 } },
      { kind: "echo", payload: 3 },
    ]);
    expect(results.map((x) => (x.error ? x.error.code : "ok"))).toEqual(["ok", "validation_error", "ok"]);
    expect(r.sent.map((x) => (x.body as { jobs: unknown[] }).jobs.length)).toEqual([2]);
  });
});

describe("what the transports report when the API doesn't answer", () => {
  it("an Invoke of a function that is not the API", async () => {
    const client = createClient<App>({ transport: invokeTransport({ functionName: "enqueue", lambda }) });
    const err = await failure(client.get("01ARZ3NDEKTSV4RRFFQ69G5FAV"));
    expect(err).toBeInstanceOf(SkyforgeTransportError);
    expect((err as Error).message).toMatch(/did not answer as the API function does/);
  });

  it("an Invoke of a function that doesn't exist", async () => {
    const client = createClient<App>({ transport: invokeTransport({ functionName: "nope", lambda }) });
    const err = await failure(client.queues.list());
    expect(err).toBeInstanceOf(SkyforgeTransportError);
    expect(err).toMatchObject({ answer: { status: 404 } });
  });

  it("the loopback endpoint helpers need no AWS credentials", async () => {
    const invoke = invokeTransport({ functionName: "api", endpoint: stack().url });
    try {
      const client = createClient<App>({ transport: invoke });
      expect((await client.queues.list()).length).toBeGreaterThan(0);
    } finally {
      invoke.close();
    }
  });
});
