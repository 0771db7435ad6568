import { InvokeCommand } from "@aws-sdk/client-lambda";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { localLambdaClient, type StackProcess, startStackProcess } from "../support/local-stack-process.ts";
import { type Json, stackHttp } from "../support/stack-http.ts";

let stack: StackProcess;
beforeAll(async () => {
  stack = await startStackProcess();
}, 90_000);
afterAll(async () => {
  if (!stack) return;
  await stack.interrupt();
  // Ctrl-C stops it cleanly: the shutdown ran to the end and the port is closed.
  expect(stack.output()).toContain("stopping");
  expect(stack.output()).not.toContain("shutdown failed");
  await expect(fetch(`${stack.url}/health`)).rejects.toThrow();
});

const { call, untilStatus } = stackHttp(() => stack.url);

describe("npm start: the local stack as a user runs it", () => {
  it("runs an echo job enqueued with HTTP and shows its result", async () => {
    const created = await call("POST", "/jobs", { kind: "echo", payload: { hello: "world" } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      kind: "echo",
      queue: "default",
      status: "queued",
      duplicate: false,
    });
    const done = await untilStatus(created.body.id, "done");
    expect(done).toMatchObject({ attempts: 1, result: { hello: "world" } });
  });

  it("enqueues through @aws-sdk/client-lambda Invoke, single and batch", async () => {
    const lambda = localLambdaClient(stack.url);
    const invoke = async (payload: unknown) => {
      const out = await lambda.send(
        new InvokeCommand({ FunctionName: "enqueue", Payload: Buffer.from(JSON.stringify(payload)) }),
      );
      expect(out.FunctionError).toBeUndefined();
      return JSON.parse(Buffer.from(out.Payload as Uint8Array).toString("utf8")) as Json;
    };
    const one = await invoke({ kind: "echo", payload: { via: "lambda" } });
    expect(one.duplicate).toBe(false);
    expect(await untilStatus(one.id, "done")).toMatchObject({ result: { via: "lambda" } });

    const batch = await invoke({
      jobs: [{ kind: "echo", payload: 1 }, { kind: "nope" }, { kind: "echo", payload: 2 }],
    });
    expect(batch.results).toHaveLength(3);
    expect(batch.results[1]).toMatchObject({ index: 1, error: { code: "unknown_kind" } });
    for (const r of [batch.results[0], batch.results[2]]) await untilStatus(r.id, "done");

    const bad = await invoke({ kind: "echo", maxAttempts: 0 });
    expect(bad.error).toMatchObject({ code: "validation_error" });
    lambda.destroy();
  });

  it("retries a flaky job to done on attempt 3 and kills a failing one after maxAttempts", async () => {
    const flaky = await call("POST", "/jobs", { kind: "flaky", payload: { failTimes: 2 } });
    const fail = await call("POST", "/jobs", { kind: "fail", payload: { message: "nope" }, maxAttempts: 2 });
    expect(await untilStatus(flaky.body.id, "done")).toMatchObject({
      attempts: 3,
      result: { succeededOnAttempt: 3 },
    });
    expect(await untilStatus(fail.body.id, "dead")).toMatchObject({ attempts: 2, lastError: "nope" });

    const listed = await call("GET", "/jobs?queue=default&status=dead");
    expect(listed.status).toBe(200);
    expect(listed.body.items.map((j: Json) => j.id)).toContain(fail.body.id);

    const retried = await call("POST", `/jobs/${fail.body.id}/retry`);
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({ status: "queued", attempts: 0 });
    expect(await untilStatus(fail.body.id, "dead")).toMatchObject({ attempts: 2 });
  });

  it("answers a duplicate uniqueKey with the same job", async () => {
    const body = { kind: "sleep", payload: { ms: 2000 }, uniqueKey: "report-2026-11" };
    const first = await call("POST", "/jobs", body);
    const second = await call("POST", "/jobs", body);
    expect(first.status).toBe(201);
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ id: first.body.id, duplicate: true });
  });

  it("cancels a running sleep", async () => {
    const { body } = await call("POST", "/jobs", { kind: "sleep", payload: { ms: 120_000 } });
    await untilStatus(body.id, "running");
    const cancel = await call("POST", `/jobs/${body.id}/cancel`);
    expect(cancel.status).toBe(200);
    // A running job is asked to stop, and the answer says so: it may still finish first.
    expect(cancel.body).toMatchObject({ cancel: "requested", cancelRequested: true });
    expect(await untilStatus(body.id, "cancelled")).toMatchObject({ attempts: 1 });
    const again = await call("POST", `/jobs/${body.id}/cancel`);
    expect({ status: again.status, body: again.body }).toMatchObject({
      status: 200,
      body: { status: "cancelled", cancel: "already_cancelled" },
    });
    const later = await call("POST", "/jobs", { kind: "echo", payload: 1, delaySeconds: 600 });
    const direct = await call("POST", `/jobs/${later.body.id}/cancel`);
    expect(direct.body).toMatchObject({ status: "cancelled", cancel: "cancelled" });
  });

  it("answers client mistakes with documented 4xx codes, never a 5xx", async () => {
    const cases: [string, string, unknown, number, string][] = [
      ["POST", "/jobs", "{not json", 400, "validation_error"],
      ["POST", "/jobs", { kind: "nope" }, 400, "unknown_kind"],
      ["POST", "/jobs", { kind: "echo", maxAttempts: 101 }, 400, "validation_error"],
      ["POST", "/jobs", { kind: "echo", surprise: true }, 400, "validation_error"],
      ["POST", "/jobs", { kind: "flaky", payload: { failTimes: "x" } }, 400, "validation_error"],
      ["POST", "/jobs", { kind: "echo", payload: "x".repeat(1_050_000) }, 413, "payload_too_large"],
      ["POST", "/jobs/batch", { jobs: [] }, 400, "validation_error"],
      ["GET", "/jobs/does-not-exist", undefined, 404, "not_found"],
      ["GET", "/jobs?status=weird", undefined, 400, "validation_error"],
      ["GET", "/jobs?cursor=%%%", undefined, 400, "validation_error"],
      ["POST", "/jobs/does-not-exist/cancel", undefined, 404, "not_found"],
      ["POST", "/jobs/does-not-exist/retry", undefined, 404, "not_found"],
      ["DELETE", "/jobs", undefined, 405, "method_not_allowed"],
      ["DELETE", "/nowhere", undefined, 404, "not_found"],
      ["GET", "/jobs/%ZZ", undefined, 400, "validation_error"],
    ];
    for (const [method, path, body, status, code] of cases) {
      const r = await call(method, path, body);
      expect({ method, path, status: r.status, code: r.body.error?.code }).toEqual({
        method,
        path,
        status,
        code,
      });
    }
    const done = await call("POST", "/jobs", { kind: "echo", payload: null });
    await untilStatus(done.body.id, "done");
    const late = await call("POST", `/jobs/${done.body.id}/cancel`);
    expect(late.status).toBe(409);
    expect((await call("GET", `/jobs/${done.body.id}`)).body.status).toBe("done");
  });
});
