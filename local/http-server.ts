import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Context } from "aws-lambda";
import type { HttpEvent, HttpResult } from "../lib/api/http.ts";
import type { Log } from "../lib/observability/log.ts";

/** Lambda's Invoke API path, so `new LambdaClient({ endpoint })` works against the local stack. */
const INVOKE_PATH = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/;
const MAX_BODY_BYTES = 6 * 1024 * 1024;

export interface LocalHttpOptions {
  host: string;
  port: number;
  api: (event: HttpEvent, context: Context) => Promise<HttpResult>;
  /** Functions callable through the Invoke API, by name. */
  functions: Record<string, (event: unknown) => Promise<unknown>>;
  log: Log;
}

export interface LocalHttp {
  url: string;
  close(): Promise<void>;
}

/** One loopback server: the HTTP API routes plus the Lambda Invoke API. */
export async function startLocalHttp(options: LocalHttpOptions): Promise<LocalHttp> {
  const server: Server = createServer((req, res) => {
    handle(options, req, res).catch((err) => {
      options.log.error("local http request failed", { error: String(err) });
      if (!res.headersSent) send(res, 500, { error: { code: "internal", message: "internal error" } });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function handle(options: LocalHttpOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? "/", "http://local");
  const body = await readBody(req);
  if (body === undefined) {
    send(res, 413, {
      error: { code: "payload_too_large", message: `request body is over ${MAX_BODY_BYTES} bytes` },
    });
    return;
  }
  const invoke = INVOKE_PATH.exec(url.pathname);
  if (invoke && req.method === "POST") {
    const name = decodeURIComponent(invoke[1] as string);
    const fn = options.functions[name];
    if (!fn) {
      res.setHeader("x-amzn-errortype", "ResourceNotFoundException");
      send(res, 404, { Type: "User", message: `Function not found: ${name}` });
      return;
    }
    let event: unknown;
    try {
      event = body.length ? JSON.parse(body.toString("utf8")) : {};
    } catch {
      res.setHeader("x-amzn-errortype", "InvalidRequestContentException");
      send(res, 400, { Type: "User", message: "Could not parse request body into json" });
      return;
    }
    try {
      send(res, 200, await fn(event));
    } catch (err) {
      // Lambda reports a function error with 200 + this header; the body names the error, not internals.
      res.setHeader("x-amz-function-error", "Unhandled");
      send(res, 200, { errorType: "Error", errorMessage: "function failed" });
      options.log.error("local function failed", { function: name, error: String(err) });
    }
    return;
  }
  const result = await options.api(toApiEvent(req, url, body), {} as Context);
  res.writeHead(result.statusCode ?? 200, (result.headers ?? {}) as Record<string, string>);
  res.end(result.body ?? "");
}

function toApiEvent(req: IncomingMessage, url: URL, body: Buffer): HttpEvent {
  const method = req.method ?? "GET";
  const query = Object.fromEntries(url.searchParams.entries());
  const headers = Object.fromEntries(
    Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(",") : (v ?? "")]),
  );
  const now = Date.now();
  return {
    version: "2.0",
    routeKey: "$default",
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    headers,
    ...(Object.keys(query).length ? { queryStringParameters: query } : {}),
    requestContext: {
      accountId: "local",
      apiId: "local",
      domainName: "127.0.0.1",
      domainPrefix: "local",
      http: {
        method,
        path: url.pathname,
        protocol: "HTTP/1.1",
        sourceIp: "127.0.0.1",
        userAgent: headers["user-agent"] ?? "",
      },
      requestId: randomUUID(),
      routeKey: "$default",
      stage: "$default",
      time: new Date(now).toUTCString(),
      timeEpoch: now,
    },
    ...(body.length ? { body: body.toString("utf8") } : {}),
    isBase64Encoded: false,
  };
}

async function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}
