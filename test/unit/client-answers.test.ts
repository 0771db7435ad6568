import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "../../client/create-client.ts";
import { MAX_BATCH_BODY_BYTES } from "../../client/enqueue-many.ts";
import { SkyforgeApiError, SkyforgeTransportError } from "../../client/errors.ts";
import { httpTransport } from "../../client/http-transport.ts";
import type { ApiRequest, ApiResponse, Transport } from "../../client/transport.ts";
import type { AppNames } from "../../lib/declarations/app-names.ts";

/**
 * How the client reads answers that are not a plain success: the API's error shape becomes
 * SkyforgeApiError, anything else (API Gateway's own 403, a proxy's page, no connection) a
 * SkyforgeTransportError; and how enqueueMany splits its requests and reports a failed one.
 */

const ID = "01ARZ3NDEKTSV4RRFFQ69G5FAV";
const answers: Record<string, (res: import("node:http").ServerResponse) => void> = {
  forbidden: (res) =>
    res.writeHead(403, { "content-type": "application/json" }).end('{"message":"Forbidden"}'),
  html: (res) => res.writeHead(502, { "content-type": "text/html" }).end("<html>Bad Gateway</html>"),
  conflict: (res) =>
    res
      .writeHead(409, { "content-type": "application/json" })
      .end('{"error":{"code":"conflict","message":"job is done","issues":[{"path":"id","message":"done"}]}}'),
  teapot: (res) =>
    res
      .writeHead(418, { "content-type": "application/json" })
      .end('{"error":{"code":"teapot","message":"x"}}'),
  gzip: (res) =>
    res
      .writeHead(200, { "content-type": "application/json", "content-encoding": "gzip", "x-kept": "yes" })
      .end(gzipSync(JSON.stringify({ id: ID, status: "done" }))),
};

let server: Server;
let url: string;
beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    const id = decodeURIComponent(req.url?.split("/")[2] ?? "");
    (answers[id] ?? ((r) => r.writeHead(404).end()))(res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const fail = (p: Promise<unknown>) =>
  p.then(
    () => expect.unreachable("expected a failure"),
    (e: unknown) => e,
  );

describe("answers", () => {
  const client = () => createClient<AppNames>({ transport: httpTransport({ url }) });

  it("the API's error shape is a SkyforgeApiError with its status, code and issues", async () => {
    const err = await fail(client().get("conflict"));
    expect(err).toBeInstanceOf(SkyforgeApiError);
    expect(err).toMatchObject({
      status: 409,
      code: "conflict",
      message: "job is done",
      issues: [{ path: "id", message: "done" }],
      raisedBy: "api",
    });
  });

  it.each([
    ["forbidden", 403, /HTTP 403 that is not the skyforge API's answer: {"message":"Forbidden"}/],
    ["html", 502, /HTTP 502 with a body that is not JSON: <html>Bad Gateway<\/html>/],
    ["teapot", 418, /HTTP 418 that is not the skyforge API's answer/],
  ])("%s: a transport error naming what came back", async (id, status, message) => {
    const err = await fail(client().get(id));
    expect(err).toBeInstanceOf(SkyforgeTransportError);
    expect(err).toMatchObject({ answer: { status } });
    expect((err as Error).message).toMatch(message);
  });

  it("a body fetch decompressed is handed on without the headers about its encoding", async () => {
    const answer = await httpTransport({ url }).send({ method: "GET", path: "/jobs/gzip" });
    expect(answer.body).toEqual({ id: ID, status: "done" });
    expect(answer.headers["x-kept"]).toBe("yes");
    expect(answer.headers["content-encoding"]).toBeUndefined();
  });

  it("no connection is a transport error carrying the cause", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const err = await fail(
      createClient<AppNames>({ transport: httpTransport({ url: `http://127.0.0.1:${port}` }) }).queues.list(),
    );
    expect(err).toBeInstanceOf(SkyforgeTransportError);
    expect((err as Error).message).toMatch(
      /no answer from http:\/\/127\.0\.0\.1:\d+ to GET \/queues: .*ECONNREFUSED/,
    );
  });

  it("a redirect is a transport error, and the signed request never reaches the host it names", async () => {
    const elsewhere: IncomingHttpHeaders[] = [];
    const target = createServer((req, res) => {
      elsewhere.push(req.headers);
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
    await new Promise<void>((resolve) => target.listen(0, "127.0.0.1", resolve));
    const redirecting = createServer((req, res) => {
      req.resume();
      res
        .writeHead(307, { location: `http://127.0.0.1:${(target.address() as AddressInfo).port}/jobs/x` })
        .end();
    });
    await new Promise<void>((resolve) => redirecting.listen(0, "127.0.0.1", resolve));
    try {
      const transport = httpTransport({
        url: `http://127.0.0.1:${(redirecting.address() as AddressInfo).port}`,
        credentials: { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "secret", sessionToken: "SESSION" },
      });
      const err = await fail(transport.send({ method: "GET", path: "/jobs/x" }));
      expect(err).toBeInstanceOf(SkyforgeTransportError);
      expect((err as Error).message).toMatch(
        /answered GET \/jobs\/x with a redirect, which the client does not follow/,
      );
      expect(elsewhere).toEqual([]);
    } finally {
      await new Promise<void>((resolve) => redirecting.close(() => resolve()));
      await new Promise<void>((resolve) => target.close(() => resolve()));
    }
  });

  it("a path parameter that a URL would fold away is refused before sending", async () => {
    const sent: ApiRequest[] = [];
    const c = createClient<AppNames>({
      transport: {
        send: async (r) => {
          sent.push(r);
          const job = {
            id: ID,
            kind: "echo",
            queue: "default",
            status: "queued",
            attempts: 0,
            maxAttempts: 3,
          };
          return {
            status: 200,
            headers: {},
            body: { ...job, createdAt: "2026-01-01T00:00:00.000Z", runAt: "2026-01-01T00:00:00.000Z" },
          };
        },
      },
    });
    for (const id of ["", ".", ".."]) {
      expect(await fail(c.get(id))).toMatchObject({ code: "validation_error", raisedBy: "client" });
    }
    await c.get("a/b c");
    expect(sent.map((r) => r.path)).toEqual(["/jobs/a%2Fb%20c"]);
  });
});

/** The API's batch route as a stand-in: answers each request by `reply`, recording what it got. */
function batchApi(reply: (jobs: unknown[], n: number) => Promise<ApiResponse> | ApiResponse) {
  const requests: unknown[][] = [];
  const transport: Transport = {
    async send(request) {
      const jobs = (request.body as { jobs: unknown[] }).jobs;
      requests.push(jobs);
      return reply(jobs, requests.length);
    },
  };
  return { requests, client: createClient<AppNames>({ transport }) };
}
const ok = (jobs: unknown[]): ApiResponse => ({
  status: 200,
  headers: {},
  body: {
    results: jobs.map((_, index) => ({
      index,
      id: `id-${JSON.stringify(jobs[index]).length}`,
      duplicate: false,
    })),
  },
});

describe("enqueueMany", () => {
  it("sends 100 jobs per request, and fewer when their payloads are large", async () => {
    const small = batchApi(ok);
    await small.client.enqueueMany(Array.from({ length: 250 }, (_, n) => ({ kind: "echo", payload: n })));
    expect(small.requests.map((r) => r.length)).toEqual([100, 100, 50]);

    const large = batchApi(ok);
    const text = "x".repeat(100_000);
    const results = await large.client.enqueueMany(
      Array.from({ length: 60 }, () => ({ kind: "echo", payload: text })),
    );
    expect(results).toHaveLength(60);
    for (const r of large.requests)
      expect(JSON.stringify({ jobs: r }).length).toBeLessThanOrEqual(MAX_BATCH_BODY_BYTES);
    expect(large.requests.length).toBe(3);
  });

  it("a request that fails as a whole gives its jobs its error, and the next requests still go", async () => {
    const api = batchApi((jobs, n) => {
      if (n === 1)
        return {
          status: 413,
          headers: {},
          body: { error: { code: "payload_too_large", message: "too big" } },
        };
      if (n === 2) throw new SkyforgeTransportError("no answer from the API");
      return ok(jobs);
    });
    const results = await api.client.enqueueMany(
      Array.from({ length: 250 }, (_, n) => ({ kind: "echo", payload: n })),
    );
    expect(api.requests).toHaveLength(3);
    expect(results.map((r) => r.index)).toEqual(Array.from({ length: 250 }, (_, i) => i));
    expect(new Set(results.slice(0, 100).map((r) => r.error?.code))).toEqual(new Set(["payload_too_large"]));
    expect(results[50]?.error).toEqual({
      code: "payload_too_large",
      message: "not queued: the request carrying this job was refused: too big",
    });
    expect(new Set(results.slice(100, 200).map((r) => r.error?.code))).toEqual(new Set(["internal"]));
    expect(results[150]?.error).toMatchObject({ unanswered: true });
    expect(results[150]?.error?.message).toMatch(
      /may or may not be queued: .*no answer from the API; send it again with a uniqueKey/,
    );
    expect(results.slice(200).every((r) => r.id && !r.error)).toBe(true);
  });

  const apiError = (status: number, code: string): ApiResponse => ({
    status,
    headers: {},
    body: { error: { code, message: `the API's ${code}` } },
  });
  const gateway = (status: number, message: string): ApiResponse => ({
    status,
    headers: {},
    body: { message },
  });
  /** [what came back, the code each job gets, whether it may have been queued] */
  const failures: [string, () => ApiResponse, string, boolean][] = [
    ["the API's 400", () => apiError(400, "validation_error"), "validation_error", false],
    ["the API's 500", () => apiError(500, "internal"), "internal", true],
    ["API Gateway's 403 Forbidden", () => gateway(403, "Forbidden"), "forbidden", false],
    ["API Gateway's 413", () => gateway(413, "Request Entity Too Large"), "payload_too_large", false],
    ["API Gateway's 429", () => gateway(429, "Too Many Requests"), "internal", false],
    ["API Gateway's 503", () => gateway(503, "Service Unavailable"), "internal", true],
    ["API Gateway's 504", () => gateway(504, "Endpoint request timed out"), "internal", true],
    ["an answer without results", () => ({ status: 200, headers: {}, body: {} }), "internal", true],
    [
      "Lambda refusing the Invoke (403)",
      () => {
        throw new SkyforgeTransportError("could not invoke api: AccessDeniedException", {
          status: 403,
          body: undefined,
        });
      },
      "forbidden",
      false,
    ],
    [
      "a function error (200)",
      () => {
        throw new SkyforgeTransportError("the API function api failed (Unhandled)", {
          status: 200,
          body: "boom",
        });
      },
      "internal",
      true,
    ],
    [
      "no answer",
      () => {
        throw new SkyforgeTransportError("no answer from the API");
      },
      "internal",
      true,
    ],
  ];
  it.each(failures)("%s: each job says whether it may be queued", async (_, reply, code, unsure) => {
    const results = await batchApi(reply).client.enqueueMany([
      { kind: "echo", payload: 1 },
      { kind: "echo", payload: 2 },
    ]);
    expect(results.map((r) => r.error?.code)).toEqual([code, code]);
    for (const r of results) {
      if (unsure) {
        expect(r.error).toMatchObject({ unanswered: true });
        expect(r.error?.message).toMatch(/may or may not be queued.*send it again with a uniqueKey/);
      } else {
        expect(r.error?.unanswered).toBeUndefined();
        expect(r.error?.message).toMatch(/^not queued: the request carrying this job was refused/);
      }
    }
  });
});
