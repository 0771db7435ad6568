import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { ApiRequest, Transport } from "../client/transport.ts";
import { internalErrorBody } from "../client/vocabulary.ts";
import { readBody } from "../http/request-body.ts";
import { foreignRequest } from "../http/request-guard.ts";
import { type AssetAnswer, consoleAsset, errorAnswer, isConsolePath, writeAnswer } from "./assets.ts";
import { apiCallRefusal, newConsoleToken, type Refusal } from "./console-token.ts";

/**
 * The web console for a deployed stage (`npx skyforge console --stage NAME`): a loopback server that
 * serves the console's files and forwards every other request to the stage's API through a client
 * Transport (the SigV4 one for a stage), so the API stays IAM-only and nothing public is opened.
 *
 * The server holds the operator's credentials, so it answers only its own page: a request whose
 * Host is not this server (DNS rebinding) or whose Origin is another site (a cross-site POST) is
 * refused before anything is signed (http/request-guard.ts), and so is an API call that another
 * page made (Sec-Fetch-Site, 403) or that lacks this run's token (401): another local user's curl, or
 * an `<img>` on a web page, which sends no Origin (console/console-token.ts).
 *
 * The console's files are served without the token: the page must load before it can read the token
 * from its address, and the files are the package's public code, read-only, with no data in them and
 * nothing signed.
 */
export interface ConsoleServerOptions {
  transport: Transport;
  /** 0 (the default) picks a free port. */
  port?: number;
  /** Loopback only: 127.0.0.1 (the default), ::1 or localhost. */
  host?: string;
  /**
   * Told about a request that failed inside the server (the browser gets only "internal error"):
   * by default a line on stderr.
   */
  onError?: (err: unknown) => void;
}

export interface ConsoleServer {
  /**
   * The console page with this run's token in the fragment, which the browser keeps to itself:
   * http://127.0.0.1:4123/console/#token=… Whoever has it can drive the stage as the operator.
   */
  url: string;
  /** This run's token, as the page sends it in the x-skyforge-console-token header. */
  token: string;
  /** The server's origin, e.g. http://127.0.0.1:4123 */
  origin: string;
  close(): Promise<void>;
}

/** Lambda's payload limit: the stage's API could not take a larger body anyway. */
const MAX_BODY_BYTES = 6 * 1024 * 1024;
const API_METHODS = new Set<ApiRequest["method"]>(["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"]);
const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"]);

export async function startConsoleServer(options: ConsoleServerOptions): Promise<ConsoleServer> {
  const host = options.host ?? "127.0.0.1";
  if (!LOOPBACK.has(host)) throw new Error(`the console serves loopback only, not ${host}`);
  const onError = options.onError ?? ((err) => console.error("skyforge console: a request failed:", err));
  const token = newConsoleToken();
  let port = 0;
  const server = createServer((req, res) => {
    handle(options.transport, { port, token }, req, res).catch((err) => {
      // The details stay here: the page, or whoever sent the request, learns only that it failed.
      onError(err);
      if (res.headersSent || res.destroyed) return;
      res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify(internalErrorBody()));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, resolve);
  });
  port = (server.address() as AddressInfo).port;
  const origin = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
  return {
    url: `${origin}/console/#token=${token}`,
    token,
    origin,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function handle(
  transport: Transport,
  { port, token }: { port: number; token: string },
  req: IncomingMessage,
  res: ServerResponse,
) {
  const refusal = foreignRequest(req, { port });
  if (refusal) return writeAnswer(req, res, errorAnswer("forbidden", refusal));
  // The path as sent, not normalized (`..` and `%2e` stay), as the local stack and API Gateway see it.
  const target = req.url ?? "/";
  const q = target.indexOf("?");
  const path = q < 0 ? target : target.slice(0, q);
  if (!path.startsWith("/")) {
    return writeAnswer(req, res, errorAnswer("validation_error", "the request target must be a path"));
  }
  if (path === "/") {
    req.resume();
    res.writeHead(302, { location: "/console/" });
    res.end();
    return;
  }
  if (isConsolePath(path)) return writeAnswer(req, res, await consoleAsset(req.method ?? "GET", path));
  const denied = apiCallRefusal(req, token);
  if (denied) return writeAnswer(req, res, refusalAnswer(denied));
  const params = new URLSearchParams(q < 0 ? "" : target.slice(q + 1).split("#")[0]);
  writeAnswer(req, res, await forward(transport, req, path, params));
}

async function forward(
  transport: Transport,
  req: IncomingMessage,
  path: string,
  params: URLSearchParams,
): Promise<AssetAnswer> {
  const method = (req.method ?? "GET") as ApiRequest["method"];
  if (!API_METHODS.has(method)) {
    req.resume();
    return errorAnswer("method_not_allowed", `${method.slice(0, 20)} is not an API method`, {
      allow: [...API_METHODS].join(", "),
    });
  }
  const read = await readBody(req, MAX_BODY_BYTES);
  if (read.kind === "too_large")
    return errorAnswer("payload_too_large", `the body is over ${MAX_BODY_BYTES} bytes`);
  if (read.kind === "aborted") throw new Error("the request body was cut off");
  let body: unknown;
  if (read.body.length > 0) {
    try {
      body = JSON.parse(read.body.toString("utf8"));
    } catch {
      return errorAnswer("validation_error", "the request body is not JSON");
    }
  }
  // A name given twice is joined with a comma, as API Gateway does, so the API refuses it the same way.
  // A Map, not an object: a name such as `constructor` or `__proto__` is only a name.
  const joined = new Map<string, string>();
  for (const [name, value] of params) {
    const before = joined.get(name);
    joined.set(name, before === undefined ? value : `${before},${value}`);
  }
  const query = Object.fromEntries(joined);
  // The path goes on as it came, still escaped, as the Transport expects.
  const answer = await transport
    .send({ method, path, ...(params.size ? { query } : {}), ...(body === undefined ? {} : { body }) })
    .catch((err: unknown) => err as Error);
  if (answer instanceof Error) {
    const text = JSON.stringify({
      error: { code: "internal", message: `the API could not be reached: ${answer.message}` },
    });
    return { status: 502, headers: { "content-type": "application/json" }, body: Buffer.from(text) };
  }
  const headers: Record<string, string> = {};
  const allow = Object.entries(answer.headers).find(([k]) => k.toLowerCase() === "allow");
  if (allow) headers.allow = allow[1];
  if (answer.body === undefined) return { status: answer.status, headers, body: Buffer.alloc(0) };
  headers["content-type"] = "application/json";
  return { status: answer.status, headers, body: Buffer.from(JSON.stringify(answer.body)) };
}

/** The proxy's own refusal, in the API's error shape (the API never answers 401 or 403 itself). */
function refusalAnswer({ status, code, message }: Refusal): AssetAnswer {
  const body = Buffer.from(JSON.stringify({ error: { code, message } }));
  return {
    status,
    headers: { "content-type": "application/json", "content-length": String(body.length) },
    body,
  };
}
