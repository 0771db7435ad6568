import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { clip } from "../client/errors.ts";
import { ClientError, type ErrorCode } from "../client/vocabulary.ts";
import { consoleRealtimeModule, REALTIME_MODULE } from "./realtime-bundle.ts";

/**
 * The web console's files, served under /console by the local stack (local/console-assets.ts) and by
 * the stage proxy (console/serve.ts). Only the URLs listed here exist: a request path is looked up
 * as an exact key, never joined onto a directory, so no path (`..`, `%2e%2e`, `//`) can reach
 * another file. Vendor files come from the installed packages, never from a CDN.
 */
export const CONSOLE_PATH = "/console";

/**
 * The console's own files: beside this module in the repo; in the `skyforge` package, whose dist/
 * holds this module bundled, in dist/console/ (scripts/build-packages.ts copies them there).
 */
const here = dirname(fileURLToPath(import.meta.url));
const consoleDir = existsSync(join(here, "index.html")) ? here : join(here, "console");
const require = createRequire(import.meta.url);

const contentTypes: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".map": "application/json; charset=utf-8",
};

/** The console's own modules, each served as /console/<name>. */
const ownFiles = [
  "app.js",
  "html.js",
  "api.js",
  "poll.js",
  "format.js",
  "queues.js",
  "jobs.js",
  "job-detail.js",
  "live-job.js",
  "queue-tail.js",
  "durable-steps.js",
  "job-timeline.js",
  "timeline.js",
  "schedules.js",
  "chart.js",
  "enqueue.js",
  "style.css",
  "widgets.css",
] as const;

/** The console's own files as a package copies them: index.html and every module and style sheet. */
export const consoleSourceFiles = (): string[] => ["index.html", ...ownFiles].map((f) => join(consoleDir, f));

/**
 * The browser's import map in index.html names these URLs. Each package's entry is found the way
 * Node finds it (hoisted or not); spelled out as `require.resolve("name")`, so the package build's
 * check of declared dependencies sees them (scripts/package-imports.ts).
 */
function vendorFiles(): [string, string][] {
  const preact = dirname(require.resolve("preact")); // preact/dist
  const hooks = dirname(require.resolve("preact/hooks")); // preact/hooks/dist
  const htm = dirname(require.resolve("htm")); // htm/dist
  const uplot = dirname(require.resolve("uplot")); // uplot/dist
  return [
    ["preact.mjs", join(preact, "preact.mjs")],
    ["preact.mjs.map", join(preact, "preact.mjs.map")],
    ["hooks.mjs", join(hooks, "hooks.mjs")],
    ["hooks.mjs.map", join(hooks, "hooks.mjs.map")],
    ["htm.mjs", join(htm, "htm.mjs")],
    ["uPlot.esm.js", join(uplot, "uPlot.esm.js")],
    ["uPlot.min.css", join(uplot, "uPlot.min.css")],
  ];
}

/** The one URL not a file of the list: the realtime client, built (console/realtime-bundle.ts). */
const REALTIME_URL = `${CONSOLE_PATH}/vendor/${REALTIME_MODULE}`;

let assetMap: Map<string, string> | undefined;
/** URL path → file on disk: the whole allow-list. */
export function consoleAssets(): ReadonlyMap<string, string> {
  assetMap ??= new Map<string, string>([
    [CONSOLE_PATH, join(consoleDir, "index.html")],
    [`${CONSOLE_PATH}/`, join(consoleDir, "index.html")],
    ...ownFiles.map((f): [string, string] => [`${CONSOLE_PATH}/${f}`, join(consoleDir, f)]),
    ...vendorFiles().map(([url, file]): [string, string] => [`${CONSOLE_PATH}/vendor/${url}`, file]),
  ]);
  return assetMap;
}

export function isConsolePath(path: string): boolean {
  return path === CONSOLE_PATH || path.startsWith(`${CONSOLE_PATH}/`);
}

export interface AssetAnswer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

const ALLOWED = "GET, HEAD";

/** The answer to `method path` for a path under /console: the file, a 404 or a 405, in the API's error shape. */
export async function consoleAsset(method: string, path: string): Promise<AssetAnswer> {
  if (method !== "GET" && method !== "HEAD") {
    return errorAnswer(
      "method_not_allowed",
      `${clip(method)} is not allowed on the console; use GET or HEAD`,
      {
        allow: ALLOWED,
      },
    );
  }
  const file = path === REALTIME_URL ? join(consoleDir, REALTIME_MODULE) : consoleAssets().get(path);
  if (!file) return errorAnswer("not_found", `no console file ${clip(path)}`);
  const body = Buffer.from(
    path === REALTIME_URL ? await consoleRealtimeModule(consoleDir) : await readFile(file),
  );
  const ext = file.slice(file.lastIndexOf("."));
  const headers: Record<string, string> = {
    "content-type": contentTypes[ext] ?? "application/octet-stream",
    "content-length": String(body.length),
    // Always revalidated, so an edited file (or a new version) shows on the next load.
    "cache-control": "no-cache",
    "x-content-type-options": "nosniff",
  };
  if (ext === ".html") {
    headers["content-security-policy"] = pageSecurityPolicy(body.toString("utf8"));
    headers["referrer-policy"] = "no-referrer";
  }
  return { status: 200, headers, body };
}

/**
 * Scripts only from this origin, plus the page's inline import map by its hash; no frames, so
 * another site can't wrap the console's buttons.
 */
function pageSecurityPolicy(html: string): string {
  const hashes = [...html.matchAll(/<script type="importmap">([\s\S]*?)<\/script>/g)].map(
    (m) =>
      `'sha256-${createHash("sha256")
        .update(m[1] ?? "")
        .digest("base64")}'`,
  );
  return [
    "default-src 'self'",
    `script-src 'self' ${hashes.join(" ")}`.trim(),
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    // The realtime endpoint: the local stack's broker on loopback, IoT Core's wss on AWS.
    "connect-src 'self' ws://127.0.0.1:* ws://localhost:* wss://*.amazonaws.com",
    // MQTT.js keeps its keepalive timer in a worker it makes from a blob, so a background tab's
    // throttled timers don't drop the subscription; no other worker, and no script from elsewhere.
    "worker-src blob:",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'self'",
  ].join("; ");
}

export function errorAnswer(
  code: Exclude<ErrorCode, "internal">,
  message: string,
  extra: Record<string, string> = {},
): AssetAnswer {
  const error = new ClientError(code, message);
  const body = Buffer.from(JSON.stringify(error.toBody()));
  return {
    status: error.httpStatus,
    headers: { "content-type": "application/json", "content-length": String(body.length), ...extra },
    body,
  };
}

/** Writes an answer; a HEAD gets the same headers (content-length included) and no body. */
export function writeAnswer(req: IncomingMessage, res: ServerResponse, answer: AssetAnswer): void {
  if (res.destroyed) return;
  // A body nobody reads (a POST to a file) is drained, so the connection can serve the next request.
  req.resume();
  res.writeHead(answer.status, answer.headers);
  res.end(req.method === "HEAD" ? undefined : answer.body);
}
