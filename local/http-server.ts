import {
  createServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
  STATUS_CODES,
} from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import type { Context } from "aws-lambda";
import { readBody } from "../http/request-body.ts";
import { foreignRequest } from "../http/request-guard.ts";
import { clip, type HttpEvent, type HttpResult, methodNotAllowed } from "../lib/api/http.ts";
import { apiRouteMatcher, TOKEN_CALLBACK_ROUTE } from "../lib/api/route-keys.ts";
import { ClientError, type ClientErrorCode, internalErrorBody } from "../lib/errors.ts";
import { MAX_API_BODY_BYTES } from "../lib/limits.ts";
import { errorFields, type Log } from "../lib/observability/log.ts";
import type { McpHttpEndpoint } from "../mcp/http-sessions.ts";
import { splitTarget, toApiEvent } from "./api-event.ts";
import { serveConsole } from "./console-assets.ts";
import { INVOKE_PATH, type LocalFunctions, serveInvoke } from "./lambda-invoke.ts";
import { MCP_PATH, serveMcp } from "./mcp-route.ts";

type ApiHandler = (event: HttpEvent, context: Context) => Promise<HttpResult>;

export interface LocalHttpOptions {
  host: string;
  port: number;
  /** Every route but the token callback's: the API function. */
  api: ApiHandler;
  /**
   * POST /tokens/{id}, deployed as a function of its own without IAM auth (docs/architecture.md §22);
   * without it, that route goes to `api` too.
   */
  tokenCallback?: ApiHandler;
  /** Functions callable through the Invoke API, by name. */
  functions: LocalFunctions;
  log: Log;
  /**
   * MCP's Streamable HTTP at /mcp (docs/guide/mcp.md), behind the same guard as every route, and
   * for loopback peers only.
   */
  mcp?: McpHttpEndpoint;
  /**
   * How long a client may take to send its headers, and its whole request, before a 408. Loopback
   * clients send at once, so these are far below Node's Internet-sized defaults (60 s and 300 s).
   */
  timeouts?: { headersMs?: number; requestMs?: number };
}

export interface LocalHttp {
  url: string;
  close(): Promise<void>;
}

/**
 * One loopback server: the HTTP API routes, the Lambda Invoke API and the web console (/console).
 * Whatever a client sends, it gets an answer in the API's error shape `{ error: { code, message } }`
 * (or AWS's, on Invoke), including the requests Node's HTTP parser refuses before any handler runs.
 *
 * Nothing here checks who is calling, so a request another web page makes (a cross-site form POST,
 * DNS rebinding) is refused on every route before it is read: see http/request-guard.ts.
 */
export async function startLocalHttp(options: LocalHttpOptions): Promise<LocalHttp> {
  const headersTimeout = options.timeouts?.headersMs ?? 10_000;
  let port = 0;
  const server: Server = createServer(
    {
      // Checked below, so a missing Host gets the error shape instead of Node's bare 400.
      requireHostHeader: false,
      headersTimeout,
      requestTimeout: Math.max(headersTimeout, options.timeouts?.requestMs ?? 60_000),
      connectionsCheckingInterval: Math.min(1_000, headersTimeout),
    },
    (req, res) => {
      serve(options, port, req, res).catch((err) => {
        options.log.error("local http request failed", errorFields(err));
        if (res.headersSent || res.destroyed) return;
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify(internalErrorBody()));
      });
    },
  );
  // An Expect other than 100-continue is ignored (RFC 9110 allows it) rather than a bodiless 417.
  server.on("checkExpectation", (req, res) => server.emit("request", req, res));
  server.on("clientError", answerClientError);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, resolve);
  });
  port = (server.address() as AddressInfo).port;
  return {
    url: `http://${options.host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function serve(
  options: LocalHttpOptions,
  port: number,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  if (req.httpVersion === "1.1" && req.headers.host === undefined) {
    sendError(res, "validation_error", "an HTTP/1.1 request needs a Host header");
    return;
  }
  // Not this server's caller: 403, as the console's proxy and the emulators' guard answer it.
  const refusal = foreignRequest(req, { port, host: options.host });
  if (refusal) {
    req.resume(); // unread, so the connection can still carry the answer
    sendError(res, "forbidden", refusal);
    return;
  }
  const { path, query } = splitTarget(req.url ?? "/");
  if (await serveConsole(req, res, path)) return;
  if (path === MCP_PATH && options.mcp) {
    await serveMcp(req, res, options.mcp, sendError);
    return;
  }
  const invoke = INVOKE_PATH.exec(path);
  if (invoke) {
    await serveInvoke(req, res, invoke[1] as string, query, options.functions, options.log);
    return;
  }
  // As API Gateway routes: a request no route key names exactly never reaches the function.
  const method = req.method ?? "GET";
  const route = apiRouteMatcher.find(method, path);
  if (!route) {
    req.resume(); // unread, so the connection can still carry the answer
    sendNoRoute(res, method, path);
    return;
  }
  const read = await readBody(req, MAX_API_BODY_BYTES);
  if (read.kind === "aborted") return; // answered by answerClientError, or nobody is listening
  if (read.kind === "too_large") {
    sendError(res, "payload_too_large", `the request body is over ${MAX_API_BODY_BYTES} bytes`);
    return;
  }
  // Each route to its function, as API Gateway's integrations send them.
  const handler =
    route.routeKey === TOKEN_CALLBACK_ROUTE ? (options.tokenCallback ?? options.api) : options.api;
  const result = await handler(toApiEvent(req, path, query, read.body, route), {} as Context);
  if (res.destroyed) return;
  res.writeHead(result.statusCode ?? 200, (result.headers ?? {}) as Record<string, string>);
  res.end(
    result.body === undefined ? "" : Buffer.from(result.body, result.isBase64Encoded ? "base64" : "utf8"),
  );
}

/**
 * No route takes the request. Deployed, API Gateway answers its own 404 `{"message":"Not Found"}`;
 * locally the answer is the API's clearer one: 405 naming the methods when some route serves the
 * path with another, else 404.
 */
function sendNoRoute(res: ServerResponse, method: string, path: string): void {
  const allowed = apiRouteMatcher.methods(path);
  const answer = allowed.length > 0 ? methodNotAllowed(method, path, allowed) : undefined;
  if (!answer) {
    sendError(res, "not_found", `no route for ${clip(method)} ${clip(path)}`);
    return;
  }
  res.writeHead(answer.statusCode ?? 405, answer.headers as Record<string, string>);
  res.end(answer.body);
}

export function sendError(res: ServerResponse, code: ClientErrorCode, message: string): void {
  const error = new ClientError(code, message);
  res.writeHead(error.httpStatus, { "content-type": "application/json" });
  res.end(JSON.stringify(error.toBody()));
}

/** Node's parser codes for the requests it refuses before a handler runs, mapped to the API's codes. */
function framingError(err: NodeJS.ErrnoException & { reason?: string }): {
  code: ClientErrorCode;
  message: string;
} {
  switch (err.code) {
    case "HPE_HEADER_OVERFLOW":
      return { code: "headers_too_large", message: "the request's headers are too large" };
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return { code: "request_timeout", message: "the request was not received in time" };
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return { code: "headers_too_large", message: "the request's chunk extensions are too large" };
    default:
      return {
        code: "validation_error",
        message: `malformed HTTP request: ${err.reason ?? err.code ?? "unreadable"}`,
      };
  }
}

/**
 * Answers what Node's HTTP parser refused (bad framing, oversized headers, a timeout) in the API's
 * error shape, on the raw socket, and closes it: after a framing error nothing more on it can be read.
 */
function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  // A response already under way on this socket can't be interleaved with another.
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (err.code === "ECONNRESET" || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const { code, message } = framingError(err);
  const error = new ClientError(code, message);
  const body = JSON.stringify(error.toBody());
  const head = [
    `HTTP/1.1 ${error.httpStatus} ${STATUS_CODES[error.httpStatus]}`,
    "Content-Type: application/json",
    `Content-Length: ${Buffer.byteLength(body)}`,
    "Connection: close",
  ];
  socket.end(`${head.join("\r\n")}\r\n\r\n${body}`, () => socket.destroy());
}
