import {
  type InvocationType,
  InvokeCommand,
  type InvokeCommandInput,
  type LambdaClient,
  type LogType,
} from "@aws-sdk/client-lambda";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { app } from "../../app/index.ts";
import { localLambdaClient } from "../support/local-stack-process.ts";
import { aroundSqsRequests, localStackForFile } from "../support/stack-for-file.ts";

/**
 * The local stack's Lambda Invoke API against AWS's contract (issue 12 §6), through the real
 * `@aws-sdk/client-lambda`: invocation types, qualifiers, function-name forms, response headers, the
 * log tail, payload quotas and function errors.
 */

/** A payload carrying this makes the SQS send fail: the only way to get an unhandled function error. */
const SQS_OUTAGE = "inject-sqs-outage";

const stack = localStackForFile({
  app,
  instrument: aroundSqsRequests("injectSqsOutage", (request, send) => {
    if (JSON.stringify(request.input).includes(SQS_OUTAGE)) throw new Error("injected SQS outage");
    return send();
  }),
});
let lambda: LambdaClient;
beforeAll(() => {
  lambda = localLambdaClient(stack().url, "eu-west-1");
});
afterAll(() => {
  lambda?.destroy();
});

const json = (value: unknown) => Buffer.from(JSON.stringify(value));
const text = (bytes: Uint8Array | undefined) => Buffer.from(bytes ?? new Uint8Array()).toString("utf8");
let keys = 0;
const uniqueKey = () => `invoke-parity-${process.pid}-${++keys}`;

const invoke = (input: Partial<InvokeCommandInput>) =>
  lambda.send(new InvokeCommand({ FunctionName: "enqueue", ...input }));

/** The SDK's error for a refused invoke: its name (AWS's error type), HTTP status and request id. */
async function refusal(input: Partial<InvokeCommandInput>) {
  try {
    await invoke(input);
  } catch (err) {
    const e = err as Error & { $metadata: { httpStatusCode?: number; requestId?: string } };
    return {
      name: e.name,
      status: e.$metadata.httpStatusCode,
      message: e.message,
      requestId: e.$metadata.requestId,
    };
  }
  throw new Error(`expected ${JSON.stringify(input.FunctionName)} to be refused`);
}

/** An enqueue request for a job that stays `scheduled` (10 min out), so its uniqueKey stays held. */
const held = (key: string, payload: unknown = null) => ({
  kind: "echo",
  payload,
  uniqueKey: key,
  delaySeconds: 600,
});

/** Invokes enqueue for a held job under a fresh uniqueKey, as `type`. */
async function invokeHeld(type: InvocationType, payload: unknown) {
  const key = uniqueKey();
  return { key, out: await invoke({ InvocationType: type, Payload: json(held(key, payload)) }) };
}

/** Whether a held job has `key` now: a probe enqueue answers duplicate if so (and holds the key if not). */
async function jobWithKey(key: string): Promise<{ duplicate: boolean; id: string }> {
  const res = await fetch(`${stack().url}/jobs`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(held(key, "probe")),
  });
  expect(res.status).toBeLessThan(300);
  return (await res.json()) as { duplicate: boolean; id: string };
}

describe("InvocationType", () => {
  it("RequestResponse (the default) runs the function and answers 200 with its result", async () => {
    const out = await invoke({ Payload: json({ kind: "echo", payload: { n: 1 } }) });
    expect(out.StatusCode).toBe(200);
    expect(out.ExecutedVersion).toBe("$LATEST");
    expect(out.FunctionError).toBeUndefined();
    expect(out.LogResult).toBeUndefined();
    expect(out.$metadata.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.parse(text(out.Payload))).toMatchObject({ kind: "echo", status: "queued", duplicate: false });
  });

  it("Event answers 202 with an empty body, and the job is enqueued", async () => {
    const { key, out } = await invokeHeld("Event", "event");
    expect(out.StatusCode).toBe(202);
    expect(text(out.Payload)).toBe("");
    expect(out.ExecutedVersion).toBeUndefined();
    expect(out.$metadata.requestId).toBeDefined();
    expect(await jobWithKey(key)).toMatchObject({ duplicate: true });
  });

  it("DryRun answers 204 and runs nothing", async () => {
    const { key, out } = await invokeHeld("DryRun", "dry");
    expect(out.StatusCode).toBe(204);
    expect(text(out.Payload)).toBe("");
    expect(await jobWithKey(key)).toMatchObject({ duplicate: false });
  });

  it("an unknown InvocationType is refused with AWS's ValidationException, and nothing runs", async () => {
    const key = uniqueKey();
    const r = await refusal({
      InvocationType: "Async" as InvocationType,
      Payload: json(held(key)),
    });
    expect(r).toMatchObject({ name: "ValidationException", status: 400 });
    expect(r.message).toContain("Value 'Async' at 'invocationType' failed to satisfy constraint");
    expect(r.requestId).toBeDefined();
    expect(await jobWithKey(key)).toMatchObject({ duplicate: false });
  });

  it("an unknown LogType is refused the same way; two bad fields are reported together", async () => {
    const one = await refusal({ LogType: "Full" as LogType, Payload: json({ kind: "echo" }) });
    expect(one).toMatchObject({ name: "ValidationException", status: 400 });
    expect(one.message).toMatch(/^1 validation error detected: Value 'Full' at 'logType'/);
    const two = await refusal({
      LogType: "Full" as LogType,
      InvocationType: "Later" as InvocationType,
      Payload: json({ kind: "echo" }),
    });
    expect(two.message).toMatch(/^2 validation errors detected: /);
  });
});

describe("FunctionName and Qualifier", () => {
  const accepted = [
    ["the name", { FunctionName: "enqueue" }],
    ["name:$LATEST", { FunctionName: "enqueue:$LATEST" }],
    ["the name with Qualifier $LATEST", { FunctionName: "enqueue", Qualifier: "$LATEST" }],
    ["a full ARN", { FunctionName: "arn:aws:lambda:eu-west-1:123456789012:function:enqueue" }],
    [
      "a full ARN with :$LATEST",
      { FunctionName: "arn:aws:lambda:eu-west-1:123456789012:function:enqueue:$LATEST" },
    ],
    ["a partial ARN", { FunctionName: "123456789012:function:enqueue" }],
  ] as const;
  for (const [what, input] of accepted) {
    it(`accepts ${what}`, async () => {
      const out = await invoke({ ...input, Payload: json({ kind: "echo", payload: what }) });
      expect(out.StatusCode).toBe(200);
      expect(out.ExecutedVersion).toBe("$LATEST");
      expect(JSON.parse(text(out.Payload))).toMatchObject({ payload: what, status: "queued" });
    });
  }

  const missing = [
    ["a version qualifier", { Qualifier: "1" }, "arn:aws:lambda:eu-west-1:000000000000:function:enqueue:1"],
    [
      "an alias qualifier",
      { Qualifier: "prod" },
      "arn:aws:lambda:eu-west-1:000000000000:function:enqueue:prod",
    ],
    [
      "name:alias",
      { FunctionName: "enqueue:live" },
      "arn:aws:lambda:eu-west-1:000000000000:function:enqueue:live",
    ],
    [
      "an ARN with an alias",
      { FunctionName: "arn:aws:lambda:us-east-2:123456789012:function:enqueue:live" },
      "arn:aws:lambda:us-east-2:123456789012:function:enqueue:live",
    ],
    [
      "an unknown function",
      { FunctionName: "resize" },
      "arn:aws:lambda:eu-west-1:000000000000:function:resize",
    ],
  ] as const;
  for (const [what, input, arn] of missing) {
    it(`answers ResourceNotFoundException (404) for ${what}`, async () => {
      const key = uniqueKey();
      const r = await refusal({ ...input, Payload: json(held(key)) });
      expect(r).toMatchObject({
        name: "ResourceNotFoundException",
        status: 404,
        message: `Function not found: ${arn}`,
      });
      expect(await jobWithKey(key)).toMatchObject({ duplicate: false });
    });
  }

  it("refuses a Qualifier that contradicts the name's with InvalidParameterValueException", async () => {
    const r = await refusal({ FunctionName: "enqueue:$LATEST", Qualifier: "prod", Payload: json({}) });
    expect(r).toMatchObject({ name: "InvalidParameterValueException", status: 400 });
  });

  it("refuses a name outside Lambda's pattern with ValidationException", async () => {
    for (const FunctionName of ["bad name!", "a".repeat(171), "enqueue:"]) {
      expect(await refusal({ FunctionName, Payload: json({}) })).toMatchObject({
        name: "ValidationException",
        status: 400,
      });
    }
  });

  it("refuses a malformed percent-escape in the path as a ValidationException, not a 500", async () => {
    const res = await fetch(`${stack().url}/2015-03-31/functions/%ZZ/invocations`, {
      method: "POST",
      body: "{}",
    });
    expect(res.status).toBe(400);
    expect(res.headers.get("x-amzn-errortype")).toBe("ValidationException");
  });
});

describe("response headers and the log tail", () => {
  it("LogType Tail returns the invocation's log, base64, at most 4 KB", async () => {
    const out = await invoke({ LogType: "Tail", Payload: json({ kind: "echo", payload: "tail" }) });
    expect(out.StatusCode).toBe(200);
    const log = Buffer.from(out.LogResult as string, "base64");
    expect(log.length).toBeLessThanOrEqual(4096);
    const lines = log.toString("utf8");
    expect(lines).toContain(`START RequestId: ${out.$metadata.requestId} Version: $LATEST`);
    expect(lines).toMatch(/REPORT RequestId: [0-9a-f-]{36}\tDuration: [\d.]+ ms\tBilled Duration: \d+ ms/);
  });

  it("sends x-amzn-RequestId and X-Amz-Executed-Version on the wire", async () => {
    const res = await fetch(`${stack().url}/2015-03-31/functions/enqueue/invocations`, {
      method: "POST",
      body: JSON.stringify({ kind: "echo", payload: "raw" }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-amzn-requestid")).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.headers.get("x-amz-executed-version")).toBe("$LATEST");
    expect(res.headers.get("x-amz-function-error")).toBeNull();
  });
});

describe("payload quotas and bad payloads", () => {
  it("a payload over 6 MB is RequestEntityTooLargeException (413), in AWS's shape", async () => {
    const big = Buffer.alloc(6 * 1024 * 1024 + 1, 0x20);
    const r = await refusal({ Payload: big });
    expect(r).toMatchObject({
      name: "RequestEntityTooLargeException",
      status: 413,
      message: "Request must be smaller than 6291456 bytes for the InvokeFunction operation",
    });
    const res = await fetch(`${stack().url}/2015-03-31/functions/enqueue/invocations`, {
      method: "POST",
      body: big,
    });
    expect(res.status).toBe(413);
    expect(res.headers.get("x-amzn-errortype")).toBe("RequestEntityTooLargeException");
    expect(await res.json()).toEqual({
      Type: "User",
      message: "Request must be smaller than 6291456 bytes for the InvokeFunction operation",
    });
  });

  it("an Event payload over 1 MB is RequestEntityTooLargeException, and nothing is enqueued", async () => {
    const key = uniqueKey();
    const payload = json(held(key, "x".repeat(1024 * 1024)));
    const r = await refusal({ InvocationType: "Event", Payload: payload });
    expect(r).toMatchObject({ name: "RequestEntityTooLargeException", status: 413 });
    expect(r.message).toBe(
      `${payload.length} byte payload is too large for the Event invocation type (limit 1048576 bytes)`,
    );
    expect(await jobWithKey(key)).toMatchObject({ duplicate: false });
  });

  it("a payload that is not JSON is InvalidRequestContentException (400)", async () => {
    for (const Payload of [Buffer.from("{not json"), Buffer.from([0xff, 0xfe, 0x7b, 0x7d])]) {
      expect(await refusal({ Payload })).toMatchObject({
        name: "InvalidRequestContentException",
        status: 400,
      });
    }
  });

  it("a caller's mistake in the payload is the function's answer, not an invoke error", async () => {
    const out = await invoke({ Payload: json({ kind: "nope" }) });
    expect(out.StatusCode).toBe(200);
    expect(out.FunctionError).toBeUndefined();
    expect(JSON.parse(text(out.Payload))).toMatchObject({ error: { code: "unknown_kind" } });
  });
});

describe("function errors", () => {
  it("an unhandled error is 200 with X-Amz-Function-Error: Unhandled and no internals", async () => {
    const out = await invoke({ LogType: "Tail", Payload: json({ kind: "echo", payload: SQS_OUTAGE }) });
    expect(out.StatusCode).toBe(200);
    expect(out.FunctionError).toBe("Unhandled");
    expect(out.ExecutedVersion).toBe("$LATEST");
    expect(JSON.parse(text(out.Payload))).toEqual({ errorType: "Error", errorMessage: "function failed" });
    expect(Buffer.from(out.LogResult as string, "base64").toString("utf8")).toContain(
      "\tERROR\tInvoke Error",
    );
  });

  it("an Event whose function fails was still accepted: 202", async () => {
    const out = await invoke({
      InvocationType: "Event",
      Payload: json({ kind: "echo", payload: SQS_OUTAGE }),
    });
    expect(out.StatusCode).toBe(202);
    expect(out.FunctionError).toBeUndefined();
  });
});

describe("the Invoke path itself", () => {
  it("answers another method with 405 and Allow: POST", async () => {
    const res = await fetch(`${stack().url}/2015-03-31/functions/enqueue/invocations`);
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST");
    expect(await res.json()).toMatchObject({ error: { code: "method_not_allowed" } });
  });
});
