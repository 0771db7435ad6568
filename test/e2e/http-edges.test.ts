import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { app } from "../../app/index.ts";
import { apiRouteMatcher } from "../../lib/api/route-keys.ts";
import { createApiHandler } from "../../lib/api/routes.ts";
import { errorCodes } from "../../lib/errors.ts";
import { silentLog } from "../../lib/observability/log.ts";
import { type LocalHttp, startLocalHttp } from "../../local/http-server.ts";
import { type LocalStack, startLocalStack } from "../../local/stack.ts";

/**
 * The HTTP edges of the local stack (issue 12 §1, §8): raw framing errors, oversized headers and
 * bodies, odd encodings, wrong methods, duplicated query parameters and malformed path ids. Every
 * case must get a 4xx in the documented shape `{ error: { code, message } }` (its code's status from
 * `errorCodes`), never a 5xx, and within 2 s.
 */

const ANSWER_WITHIN_MS = 2_000;
/** A well-formed ULID no job has. */
const NO_SUCH_JOB = "01ARZ3NDEKTSV4RRFFQ69G5FAV";

let stack: LocalStack;
beforeAll(async () => {
  stack = await startLocalStack({ app, port: 0, autoTick: false });
});
afterAll(async () => {
  await stack?.stop();
});

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
  ms: number;
}

/**
 * Sends bytes on a fresh connection and reads the answer until the server closes it (bounded). The
 * requests below name `Host: local`; it is sent as the server's own address, as any client sends it
 * (another Host is refused, see "requests from other sites"). `keepOpen`: the request is left
 * unfinished, so the answer is read once it has all arrived, without waiting for a close.
 */
function raw(
  base: string,
  request: string | Buffer,
  options: { halfClose?: boolean; keepOpen?: boolean } = {},
): Promise<Answer> {
  const { hostname, port, host } = new URL(base);
  if (typeof request === "string") request = request.replace(/^Host: local(?=\r?\n)/m, `Host: ${host}`);
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(
        new Error(
          `no answer within ${ANSWER_WITHIN_MS} ms to ${JSON.stringify(String(request).slice(0, 60))}`,
        ),
      );
    }, ANSWER_WITHIN_MS);
    const answer = (): Answer => {
      const text = Buffer.concat(chunks).toString("utf8");
      const [head = "", ...rest] = text.split("\r\n\r\n");
      const [statusLine = "", ...headerLines] = head.split("\r\n");
      const headers = Object.fromEntries(
        headerLines.map((l) => [
          l.slice(0, l.indexOf(":")).toLowerCase(),
          l.slice(l.indexOf(":") + 1).trim(),
        ]),
      );
      let body = rest.join("\r\n\r\n");
      if (headers["transfer-encoding"] === "chunked") body = unchunk(body);
      return { status: Number(statusLine.split(" ")[1]), headers, body, ms: Date.now() - started };
    };
    socket.on("data", (d) => {
      chunks.push(d);
      if (options.keepOpen && answerComplete(Buffer.concat(chunks).toString("utf8"))) socket.destroy();
    });
    socket.on("error", () => {}); // a reset after the answer is fine; a missing answer fails below
    socket.on("close", () => {
      clearTimeout(timer);
      resolve(answer());
    });
    socket.write(request);
    if (options.halfClose) socket.end();
  });
}

/** Whether a whole answer has arrived: its Content-Length's bytes, or a chunked body's last chunk. */
function answerComplete(text: string): boolean {
  const end = text.indexOf("\r\n\r\n");
  if (end < 0) return false;
  const head = text.slice(0, end).toLowerCase();
  const body = text.slice(end + 4);
  if (/\r\ntransfer-encoding: chunked/.test(head)) return body.endsWith("0\r\n\r\n");
  const length = /\r\ncontent-length: (\d+)/.exec(head);
  return length !== null && Buffer.byteLength(body) >= Number(length[1]);
}

function unchunk(text: string): string {
  let out = "";
  let rest = text;
  for (;;) {
    const eol = rest.indexOf("\r\n");
    const size = Number.parseInt(rest.slice(0, eol), 16);
    if (!size) return out;
    out += rest.slice(eol + 2, eol + 2 + size);
    rest = rest.slice(eol + 2 + size + 2);
  }
}

async function call(
  method: string,
  path: string,
  init: { headers?: Record<string, string>; body?: string | Buffer | ReadableStream } = {},
): Promise<Answer> {
  const started = Date.now();
  const res = await fetch(`${stack.url}${path}`, {
    method,
    signal: AbortSignal.timeout(ANSWER_WITHIN_MS),
    ...(init.headers ? { headers: init.headers } : {}),
    ...(init.body === undefined ? {} : { body: init.body, duplex: "half" }),
  } as RequestInit);
  const body = await res.text();
  return { status: res.status, headers: Object.fromEntries(res.headers), body, ms: Date.now() - started };
}

/** The documented error shape, with the status its code has in `errorCodes`, answered in time. */
function expectError(answer: Answer, status: number, code: keyof typeof errorCodes): void {
  expect(answer.ms).toBeLessThan(ANSWER_WITHIN_MS);
  const body = JSON.parse(answer.body) as { error?: { code?: string; message?: unknown } };
  expect({ status: answer.status, code: body.error?.code }).toEqual({ status, code });
  expect(errorCodes[code]).toBe(status);
  expect(typeof body.error?.message).toBe("string");
  expect(answer.headers["content-type"]).toMatch(/^application\/json/);
}

const get = (path: string, extra = "") =>
  `GET ${path} HTTP/1.1\r\nHost: local\r\n${extra}Connection: close\r\n\r\n`;
const post = (path: string, headers: string, body = "") =>
  `POST ${path} HTTP/1.1\r\nHost: local\r\n${headers}\r\n${body}`;

describe("raw HTTP framing: Node's parser refuses it, the answer still has the error shape", () => {
  const cases: [string, string, number, keyof typeof errorCodes][] = [
    ["a request line that is not HTTP", "HELLO\r\n\r\n", 400, "validation_error"],
    ["a method with a bad character", "G@T /health HTTP/1.1\r\nHost: local\r\n\r\n", 400, "validation_error"],
    ["a lower-case method", "get /health HTTP/1.1\r\nHost: local\r\n\r\n", 400, "validation_error"],
    ["an unknown HTTP version", "GET /health HTTP/9.9\r\nHost: local\r\n\r\n", 400, "validation_error"],
    ["a space inside the target", "GET /he alth HTTP/1.1\r\nHost: local\r\n\r\n", 400, "validation_error"],
    [
      "a raw non-ASCII byte in the target",
      "GET /jobs/\u00e9 HTTP/1.1\r\nHost: local\r\n\r\n",
      400,
      "validation_error",
    ],
    ["a header name with a space", get("/health", "Bad Header: x\r\n"), 400, "validation_error"],
    ["a header line without a colon", get("/health", "NoColon\r\n"), 400, "validation_error"],
    ["a NUL in a header value", get("/health", "X-A: a\u0000b\r\n"), 400, "validation_error"],
    ["bare LF line endings", "GET /health HTTP/1.1\nHost: local\n\n", 400, "validation_error"],
    [
      "Content-Length together with Transfer-Encoding",
      post("/jobs", "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n", "0\r\n\r\n"),
      400,
      "validation_error",
    ],
    [
      "two different Content-Lengths",
      post("/jobs", "Content-Length: 3\r\nContent-Length: 4\r\n", "abcd"),
      400,
      "validation_error",
    ],
    [
      "a Content-Length that is not a number",
      post("/jobs", "Content-Length: abc\r\n"),
      400,
      "validation_error",
    ],
    [
      "a chunk size that is not hex",
      post("/jobs", "Transfer-Encoding: chunked\r\n", "zz\r\nabc\r\n0\r\n\r\n"),
      400,
      "validation_error",
    ],
    [
      "an HTTP/1.1 request without Host",
      "GET /health HTTP/1.1\r\nConnection: close\r\n\r\n",
      400,
      "validation_error",
    ],
    [
      "headers over Node's 16 KB limit",
      get("/health", `X-Big: ${"a".repeat(20_000)}\r\n`),
      431,
      "headers_too_large",
    ],
    ["a target over the header limit", get(`/jobs?cursor=${"a".repeat(20_000)}`), 431, "headers_too_large"],
    [
      "a chunk extension over the limit",
      post("/jobs", "Transfer-Encoding: chunked\r\n", `1;${"a".repeat(20_000)}\r\na\r\n0\r\n\r\n`),
      431,
      "headers_too_large",
    ],
  ];
  for (const [what, request, status, code] of cases) {
    it(`${what} → ${status} ${code}`, async () => {
      expectError(await raw(stack.url, request), status, code);
    });
  }

  it("a body cut short by the client (half-close) → 400, not a hang or a 500", async () => {
    const request = post("/jobs", "Content-Length: 100\r\n", '{"kind":');
    expectError(await raw(stack.url, request, { halfClose: true }), 400, "validation_error");
  });

  it("an Expect other than 100-continue is ignored, and the request served", async () => {
    const r = await raw(stack.url, get("/health", "Expect: teapot\r\n"));
    expect(r.status).toBe(200);
  });

  it("an absolute-form target is served like its path", async () => {
    const r = await raw(
      stack.url,
      "GET http://127.0.0.1/health HTTP/1.1\r\nHost: local\r\nConnection: close\r\n\r\n",
    );
    expect(r.status).toBe(200);
  });

  it("`//health` is not folded into another path: 404", async () => {
    expectError(await raw(stack.url, get("//health")), 404, "not_found");
  });
});

describe("a client that stops sending gets 408 in the error shape", () => {
  let slow: LocalHttp;
  beforeAll(async () => {
    slow = await startLocalHttp({
      host: "127.0.0.1",
      port: 0,
      api: createApiHandler(stack.engine),
      functions: {},
      log: silentLog,
      timeouts: { headersMs: 300, requestMs: 600 },
    });
  });
  afterAll(async () => {
    await slow?.close();
  });

  it("headers never finished → 408 request_timeout", async () => {
    expectError(await raw(slow.url, "GET /health HTTP/1.1\r\nHost: local\r\n"), 408, "request_timeout");
  });

  it("a body never finished → 408 request_timeout", async () => {
    expectError(await raw(slow.url, post("/jobs", "Content-Length: 100\r\n", "{")), 408, "request_timeout");
  });
});

describe("bodies: size and encoding", () => {
  const echo = JSON.stringify({ kind: "echo", payload: { edge: true }, delaySeconds: 600 });

  it("a body over 6 MB with Content-Length → 413 payload_too_large, refused from the header alone", async () => {
    // Not a byte of the body is sent: an answer at all shows the server refused it unread.
    const tooLong = `Content-Length: ${6 * 1024 * 1024 + 1}\r\nContent-Type: application/json\r\n`;
    expectError(await raw(stack.url, post("/jobs", tooLong), { keepOpen: true }), 413, "payload_too_large");
  });

  it("a chunked body that passes 6 MB mid-stream → 413 payload_too_large", async () => {
    const chunk = new Uint8Array(1024 * 1024).fill(0x20);
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ < 7) controller.enqueue(chunk);
        else controller.close();
      },
    });
    expectError(await call("POST", "/jobs", { body }), 413, "payload_too_large");
  });

  const refused: [string, Record<string, string>, string | Buffer, number, keyof typeof errorCodes][] = [
    ["content-encoding gzip", { "content-encoding": "gzip" }, echo, 415, "unsupported_media_type"],
    ["content-encoding br", { "content-encoding": "br" }, echo, 415, "unsupported_media_type"],
    [
      "content-encoding deflate, gzip",
      { "content-encoding": "deflate, gzip" },
      echo,
      415,
      "unsupported_media_type",
    ],
    [
      "a latin-1 charset",
      { "content-type": "application/json; charset=iso-8859-1" },
      echo,
      415,
      "unsupported_media_type",
    ],
    [
      "bytes that are not UTF-8",
      {},
      Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]),
      415,
      "unsupported_media_type",
    ],
    [
      "UTF-16 with its byte-order mark",
      {},
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(echo, "utf16le")]),
      415,
      "unsupported_media_type",
    ],
    [
      "a UTF-8 byte-order mark before the JSON",
      {},
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(echo)]),
      400,
      "validation_error",
    ],
    ["an empty body", {}, "", 400, "validation_error"],
  ];
  for (const [what, headers, body, status, code] of refused) {
    it(`${what} → ${status} ${code}`, async () => {
      expectError(await call("POST", "/jobs", { headers, body }), status, code);
    });
  }

  it("identity encoding and an explicit utf-8 charset are fine", async () => {
    const headers = { "content-encoding": "identity", "content-type": "application/json; charset=UTF-8" };
    const r = await call("POST", "/jobs", { headers, body: echo });
    expect(r.status).toBe(201);
    expect(r.ms).toBeLessThan(ANSWER_WITHIN_MS);
  });
});

describe("methods", () => {
  it("HEAD /health answers like GET, without a body", async () => {
    const [head, getAnswer] = [await call("HEAD", "/health"), await call("GET", "/health")];
    expect(head.status).toBe(200);
    expect(head.body).toBe("");
    expect(Number(head.headers["content-length"])).toBe(Buffer.byteLength(getAnswer.body));
  });

  const wrong: [string, string, string][] = [
    ["DELETE", "/jobs", "GET, POST"],
    ["PUT", "/health", "GET, HEAD"],
    ["PATCH", `/jobs/${NO_SUCH_JOB}`, "GET"],
    ["GET", `/jobs/${NO_SUCH_JOB}/cancel`, "POST"],
    ["DELETE", `/jobs/${NO_SUCH_JOB}/retry`, "POST"],
    ["PUT", "/jobs/batch", "GET, POST"], // GET is the job route, with id "batch"
    ["GET", "/queues/default", "PATCH"],
    ["GET", "/queues/default/pause", "POST"],
    ["POST", "/schedules/report", "DELETE, PUT"],
    ["DELETE", "/schedules", "GET"],
    ["OPTIONS", "/jobs", "GET, POST"],
  ];
  for (const [method, path, allow] of wrong) {
    it(`${method} ${path} → 405 with Allow: ${allow}`, async () => {
      const r = await call(method, path);
      expectError(r, 405, "method_not_allowed");
      expect(r.headers.allow).toBe(allow);
    });
  }

  it("an unknown path is still 404, whatever the method", async () => {
    expectError(await call("DELETE", "/nowhere"), 404, "not_found");
    expectError(await call("GET", "/jobs/batch/more"), 404, "not_found");
  });

  it("routes match exactly: a trailing slash or an empty segment is an unknown path, and runs nothing", async () => {
    for (const [method, path] of [
      ["GET", "/jobs/"],
      ["DELETE", "/jobs/"],
      ["GET", "/health/"],
      ["GET", `/jobs/${NO_SUCH_JOB}/`],
      ["POST", "/queues/default/pause/"],
      ["POST", "/queues//pause"],
      ["POST", "//queues/default/pause"],
    ] as const) {
      expectError(await call(method, path), 404, "not_found");
    }
    const queues = JSON.parse((await call("GET", "/queues")).body) as {
      items: { name: string; paused: boolean }[];
    };
    expect(queues.items.find((q) => q.name === "default")?.paused).toBe(false);
  });

  it("DELETE /schedules/{name} answers 204 with no body", async () => {
    const put = await call("PUT", "/schedules/http-edges", {
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ cron: "0 0 1 1 *", kind: "echo" }),
    });
    expect(put.status).toBe(201);
    const del = await call("DELETE", "/schedules/http-edges");
    expect(del.status).toBe(204);
    expect(del.body).toBe("");
    expectError(await call("DELETE", "/schedules/http-edges"), 404, "not_found");
  });
});

describe("path ids", () => {
  const long = "A".repeat(3_000);
  const cases: [string, string, number, keyof typeof errorCodes][] = [
    ["GET", "/jobs/%ZZ", 400, "validation_error"],
    ["POST", "/jobs/%ZZ/cancel", 400, "validation_error"],
    ["POST", "/jobs/%ZZ/retry", 400, "validation_error"],
    ["GET", "/jobs/%E0%A4%A", 400, "validation_error"],
    ["GET", "/jobs/%", 400, "validation_error"],
    ["POST", "/queues/%ZZ/pause", 400, "validation_error"],
    ["PATCH", "/queues/%ZZ", 400, "validation_error"],
    ["PUT", "/schedules/%ZZ", 400, "validation_error"],
    ["DELETE", "/schedules/%ZZ", 400, "validation_error"],
    ["GET", `/jobs/${long}`, 404, "not_found"],
    ["POST", `/jobs/${long}/cancel`, 404, "not_found"],
    ["POST", `/jobs/${long}/retry`, 404, "not_found"],
    ["GET", `/jobs/${NO_SUCH_JOB.toLowerCase()}`, 404, "not_found"],
    ["GET", `/jobs/${NO_SUCH_JOB}`, 404, "not_found"],
    ["GET", "/jobs/%00", 404, "not_found"],
    ["POST", `/queues/${long}/pause`, 404, "not_found"],
    ["DELETE", `/schedules/${long}`, 400, "validation_error"],
  ];
  for (const [method, path, status, code] of cases) {
    it(`${method} ${path.length > 40 ? `${path.slice(0, 40)}…` : path} → ${status} ${code}`, async () => {
      const r = await call(method, path);
      expectError(r, status, code);
      // A caller's long job id is not echoed back in full.
      if (path.startsWith("/jobs/")) expect(r.body.length).toBeLessThan(1_000);
    });
  }
});

describe("query parameters", () => {
  const cases: [string, number, keyof typeof errorCodes | undefined][] = [
    ["/jobs?limit=1&limit=2", 400, "validation_error"],
    ["/jobs?queue=default&queue=default", 400, "validation_error"],
    ["/jobs?queue=default&status=dead&status=scheduled", 400, "validation_error"],
    ["/jobs?__proto__=x", 400, "validation_error"],
    ["/jobs?limit=%ZZ", 400, "validation_error"],
    ["/jobs?limit=1", 200, undefined],
  ];
  for (const [path, status, code] of cases) {
    it(`GET ${path} → ${status}${code ? ` ${code}` : ""}`, async () => {
      const r = await call("GET", path);
      if (code) expectError(r, status, code);
      else expect(r.status).toBe(status);
    });
  }

  it("names the repeated parameter", async () => {
    const r = await call("GET", "/jobs?limit=1&limit=2");
    expect(JSON.parse(r.body).error.message).toContain('"limit"');
  });
});

describe("the deployed API handler, invoked with API Gateway's events", () => {
  // biome-ignore lint/suspicious/noExplicitAny: a partial API Gateway v2 event, typed at the call.
  type Event = any;
  const invoke = async (
    method: string,
    path: string,
    extra: Record<string, unknown> = {},
  ): Promise<Answer> => {
    const event: Event = {
      version: "2.0",
      routeKey: apiRouteMatcher.find(method, path)?.routeKey ?? "$default",
      rawPath: path,
      rawQueryString: "",
      headers: {},
      requestContext: { http: { method, path, protocol: "HTTP/1.1", sourceIp: "127.0.0.1", userAgent: "" } },
      isBase64Encoded: false,
      ...extra,
    };
    const started = Date.now();
    const res = await createApiHandler(stack.engine)(event, {} as never);
    const headers = Object.fromEntries(Object.entries(res.headers ?? {}).map(([k, v]) => [k, String(v)]));
    return { status: res.statusCode ?? 0, headers, body: res.body ?? "", ms: Date.now() - started };
  };

  it("a wrong method on a known path is 405 with Allow", async () => {
    const r = await invoke("DELETE", "/jobs");
    expectError(r, 405, "method_not_allowed");
    expect(r.headers.allow).toBe("GET, POST");
  });

  it("runs no route under $default, nor for a path that is not exactly its route's", async () => {
    const r = await invoke("POST", "/queues/default/pause", { routeKey: "$default" });
    expectError(r, 404, "not_found");
    const variant = await invoke("POST", "/queues/default/pause/", {
      routeKey: "POST /queues/{name}/pause",
      pathParameters: { name: "default" },
    });
    expectError(variant, 404, "not_found");
    const queues = JSON.parse((await invoke("GET", "/queues")).body) as {
      items: { name: string; paused: boolean }[];
    };
    expect(queues.items.find((q) => q.name === "default")?.paused).toBe(false);
  });

  it("HEAD /health has GET's status and length, no body", async () => {
    const r = await invoke("HEAD", "/health");
    expect(r.status).toBe(200);
    expect(r.body).toBe("");
    expect(Number(r.headers["content-length"])).toBeGreaterThan(0);
  });

  it("a repeated query parameter, which API Gateway joins with a comma, is refused", async () => {
    const r = await invoke("GET", "/jobs", {
      rawQueryString: "queue=default&queue=heavy",
      queryStringParameters: { queue: "default,heavy" },
    });
    expectError(r, 400, "validation_error");
  });

  it("a base64 body that is not UTF-8 is 415; a compressed one too", async () => {
    const notUtf8 = { body: Buffer.from([0x7b, 0xff, 0x7d]).toString("base64"), isBase64Encoded: true };
    expectError(await invoke("POST", "/jobs", notUtf8), 415, "unsupported_media_type");
    const gzip = { headers: { "content-encoding": "gzip" }, body: "{}" };
    expectError(await invoke("POST", "/jobs", gzip), 415, "unsupported_media_type");
  });

  it("a malformed escape in a path parameter API Gateway passed on is 400", async () => {
    expectError(await invoke("GET", "/jobs/%ZZ", { pathParameters: { id: "%ZZ" } }), 400, "validation_error");
  });
});

describe("requests from other sites: refused on every route before anything is read", () => {
  const own = () => new URL(stack.url);
  /** What a page on another site can send without a preflight: a form POST, text/plain. */
  const formPost = (path: string, origin: string, body: string) =>
    call("POST", path, { headers: { origin, "content-type": "text/plain" }, body });
  const echoOnce = (uniqueKey: string) =>
    JSON.stringify({ kind: "echo", payload: { from: "another site" }, delaySeconds: 600, uniqueKey });
  /** Whether a job with this key exists: a plain enqueue with it says so, as a duplicate. */
  const wasEnqueued = async (uniqueKey: string) => {
    const r = await call("POST", "/jobs", {
      headers: { "content-type": "application/json" },
      body: echoOnce(uniqueKey),
    });
    expect(r.status).toBeLessThan(300);
    return (JSON.parse(r.body) as { duplicate: boolean }).duplicate;
  };
  const rawGet = (path: string, host: string, extra = "") =>
    raw(stack.url, `GET ${path} HTTP/1.1\r\nHost: ${host}\r\n${extra}Connection: close\r\n\r\n`);

  it("a form POST from another site's page (or an opaque one) → 403 forbidden, nothing enqueued", async () => {
    for (const origin of ["http://evil.example", "null", `http://localhost:${Number(own().port) + 1}`]) {
      const key = `cross-site-${origin}`;
      const r = await formPost("/jobs", origin, echoOnce(key));
      expectError(r, 403, "forbidden");
      expect(JSON.parse(r.body).error.message).toContain("another site");
      expect(await wasEnqueued(key)).toBe(false);
    }
  });

  it("a cross-site POST can't pause a queue, nor enqueue through the Invoke API", async () => {
    expectError(await formPost("/queues/default/pause", "http://evil.example", ""), 403, "forbidden");
    const queues = JSON.parse((await call("GET", "/queues")).body) as {
      items: { name: string; paused: boolean }[];
    };
    expect(queues.items.find((q) => q.name === "default")?.paused).toBe(false);

    const key = "cross-site-invoke";
    const invoke = await formPost(
      "/2015-03-31/functions/enqueue/invocations",
      "https://evil.example",
      JSON.stringify({ jobs: [JSON.parse(echoOnce(key))] }),
    );
    expectError(invoke, 403, "forbidden");
    expect(await wasEnqueued(key)).toBe(false);
  });

  it("a Host that is not the server's (DNS rebinding) → 403 forbidden, on the API and the console", async () => {
    for (const [path, host] of [
      ["/jobs?limit=1", `evil.example:${own().port}`],
      ["/console/", `evil.example:${own().port}`],
      ["/health", "127.0.0.1"], // no port: another server's address (port 80)
      ["/health", `127.0.0.1:${Number(own().port) + 1}`],
    ] as const) {
      const r = await rawGet(path, host);
      expectError(r, 403, "forbidden");
      expect(JSON.parse(r.body).error.message).toContain("its own address");
    }
  });

  it("its own page (Origin = the server's), localhost and a plain client are served", async () => {
    const sameOrigin = await call("POST", "/jobs", {
      headers: { origin: own().origin, "content-type": "application/json" },
      body: echoOnce("same-origin-page"),
    });
    expect(sameOrigin.status).toBe(201);
    const viaLocalhost = await rawGet(
      "/health",
      `LOCALHOST:${own().port}`,
      `Origin: http://localhost:${own().port}\r\n`,
    );
    expect(viaLocalhost.status).toBe(200);
    expect((await rawGet("/console/", own().host)).status).toBe(200);
    const plain = await call("POST", "/jobs", {
      headers: { "content-type": "application/json" },
      body: echoOnce("plain-client"),
    });
    expect(plain.status).toBe(201);
    expect((await raw(stack.url, "GET /health HTTP/1.0\r\n\r\n")).status).toBe(200);
  });
});
