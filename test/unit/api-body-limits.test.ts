import type { Context } from "aws-lambda";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type HttpEvent, readJsonBody } from "../../lib/api/http.ts";
import { createApiHandler } from "../../lib/api/routes.ts";
import { ClientError } from "../../lib/errors.ts";
import { checkEnqueueRequest } from "../../lib/job/check-request.ts";
import { tooDeepAt } from "../../lib/job/json-depth.ts";
import { EnqueueRequest, MAX_PAYLOAD_BYTES } from "../../lib/job/schemas.ts";
import { MAX_API_BODY_BYTES, MAX_ENQUEUE_BODY_BYTES, MAX_SCHEDULE_BODY_BYTES } from "../../lib/limits.ts";
import { httpApiEvent } from "../support/lambda-events.ts";
import { unreachableEngine } from "../support/unreachable-engine.ts";

/**
 * What an oversized body costs the API: nothing past counting its bytes. The bounds are shown by
 * what is never called (the JSON parser, the request schema, the per-element allocations), not by
 * timing anything.
 */

afterEach(() => vi.restoreAllMocks());

/** `[0,0,…]` of about `bytes` bytes: millions of elements, the shape that made the parse costly. */
const zeros = (bytes: number) => `[${"0,".repeat(Math.floor(bytes / 2))}0]`;

const textEvent = (body: string, isBase64Encoded = false): HttpEvent =>
  ({ headers: {}, body, isBase64Encoded, rawPath: "/jobs" }) as unknown as HttpEvent;

const refusal = (run: () => unknown): ClientError => {
  try {
    run();
  } catch (err) {
    if (err instanceof ClientError) return err;
    throw err;
  }
  return expect.unreachable("expected a refusal");
};

describe("readJsonBody", () => {
  it("refuses a body over the cap with a 413 before parsing it, as text or base64", () => {
    const parse = vi.spyOn(JSON, "parse");
    const body = `{"kind":"echo","payload":${zeros(1_000)}}`;
    for (const event of [textEvent(body), textEvent(Buffer.from(body).toString("base64"), true)]) {
      const err = refusal(() => readJsonBody(event, body.length - 1));
      expect(err).toMatchObject({ code: "payload_too_large", httpStatus: 413 });
      expect(err.message).toMatch(`over ${body.length - 1} bytes (${body.length})`);
    }
    expect(parse).not.toHaveBeenCalled();
    // At the cap exactly it is read as before.
    expect(readJsonBody(textEvent(body), body.length)).toMatchObject({ kind: "echo" });
    expect(readJsonBody(textEvent(Buffer.from(body).toString("base64"), true), body.length)).toMatchObject({
      kind: "echo",
    });
  });

  it("counts UTF-8 bytes, not characters", () => {
    const body = `"${"é".repeat(10)}"`; // 12 characters, 22 bytes
    expect(refusal(() => readJsonBody(textEvent(body), 21)).code).toBe("payload_too_large");
    expect(readJsonBody(textEvent(body), 22)).toBe("é".repeat(10));
  });

  it("defaults to Lambda's 6 MB payload", () => {
    expect(MAX_API_BODY_BYTES).toBe(6 * 1024 * 1024);
    expect(refusal(() => readJsonBody(textEvent(" ".repeat(MAX_API_BODY_BYTES + 1)))).code).toBe(
      "payload_too_large",
    );
  });

  it("leaves room for every payload the API would take, escaped as \\uXXXX", () => {
    // 1 MiB of 3-byte characters written as 6-byte escapes, plus the request's other fields.
    expect(MAX_ENQUEUE_BODY_BYTES).toBeGreaterThanOrEqual(2 * MAX_PAYLOAD_BYTES + 4 * 1024);
    expect(MAX_ENQUEUE_BODY_BYTES).toBeLessThan(MAX_API_BODY_BYTES);
  });
});

describe("the API's routes", () => {
  const engine = unreachableEngine();
  const handler = createApiHandler(engine);
  const send = (method: string, path: string, route: string, body: string) => {
    const event = httpApiEvent({ method, path, route });
    return handler(
      { ...event, body: Buffer.from(body).toString("base64"), isBase64Encoded: true },
      {} as Context,
    );
  };

  it("POST /jobs: a 6 MB array is a 413 without being parsed", async () => {
    const parse = vi.spyOn(JSON, "parse");
    const body = `{"kind":"echo","payload":${zeros(6_000_000)}}`;
    expect(body.length).toBeGreaterThan(MAX_ENQUEUE_BODY_BYTES);
    const res = await send("POST", "/jobs", "/jobs", body);
    expect(parse).not.toHaveBeenCalled();
    expect(res.statusCode).toBe(413);
    expect(res.body).toMatch(/"code":"payload_too_large"/);
  });

  it("PUT /schedules/{name}: a body over its cap is a 413 without being parsed", async () => {
    const parse = vi.spyOn(JSON, "parse");
    const body = `{"cron":"* * * * *","kind":"echo","payload":${zeros(MAX_SCHEDULE_BODY_BYTES)}}`;
    const res = await send("PUT", "/schedules/nightly", "/schedules/{name}", body);
    expect(res.statusCode).toBe(413);
    expect(parse).not.toHaveBeenCalled();
  });
});

describe("a payload over 1 MiB inside a body the API reads (a batch's job)", () => {
  it("is a 413 before the request schema walks it element by element", () => {
    const schema = vi.spyOn(EnqueueRequest, "safeParse");
    const payload = JSON.parse(zeros(2 * MAX_PAYLOAD_BYTES));
    const answer = checkEnqueueRequest({ kind: "echo", payload }, new Map(), []);
    expect(answer).toBeInstanceOf(ClientError);
    expect(answer).toMatchObject({ code: "payload_too_large" });
    expect(schema).not.toHaveBeenCalled();
  });

  it("still gets the schema's answer when it nests too deeply to serialize safely", () => {
    const deep = JSON.parse(`${"[".repeat(10_000)}${"]".repeat(10_000)}`);
    const answer = checkEnqueueRequest({ kind: "echo", payload: deep }, new Map(), []);
    expect(answer).toMatchObject({ code: "validation_error" });
  });
});

describe("the depth walk", () => {
  it("allocates nothing per element: no entries arrays, no [key, value] pairs", () => {
    const value = { rows: JSON.parse(zeros(1_000_000)), more: { list: [[1], { a: 2 }] } };
    const entries = vi.spyOn(Object, "entries");
    const map = vi.spyOn(Array.prototype, "map");
    expect(tooDeepAt(value)).toBeUndefined();
    expect(tooDeepAt(value, 2)).toEqual(["more", "list"]);
    expect(entries).not.toHaveBeenCalled();
    expect(map).not.toHaveBeenCalled();
  });
});
