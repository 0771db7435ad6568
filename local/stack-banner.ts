import { API_ROUTE_KEYS } from "../lib/api/route-keys.ts";
import type { App } from "../lib/declarations/define-app.ts";
import type { PoolKindSpec } from "../lib/declarations/pool-kind.ts";
import type { LocalStack } from "./stack.ts";

/** What the banner of `skyforge dev` (and `npm start`) shows. */
export interface BannerInput {
  stack: LocalStack;
  app: App;
  poolKinds: readonly PoolKindSpec[];
  tickSeconds: number;
  dataDir: string;
  /** The app module, as the user would name it. */
  shown: string;
  /** The example requests (default: one enqueue of the first kind). */
  tryLines: string[] | undefined;
  /** How to start from an empty data directory. */
  freshHint: string;
}

/** The lines `skyforge dev` prints once the stack serves: where everything is, and how to try it. */
export function stackBanner(input: BannerInput): string[] {
  const { stack, app, poolKinds, tickSeconds, dataDir, shown, freshHint } = input;
  const first = app.kinds[0]?.name;
  const tryLines =
    input.tryLines ??
    (first
      ? [
          `  try: curl -s -X POST ${stack.url}/jobs -H 'content-type: application/json' -d '{"kind":"${first}","payload":{}}'`,
        ]
      : []);
  return [
    `skyforge local stack (node ${process.version})`,
    `  HTTP API       ${stack.url}`,
    ...routeLines(API_ROUTE_KEYS, 100).map((l) => `                 ${l}`),
    `  Lambda Invoke  ${stack.url}/2015-03-31/functions/{enqueue,api}/invocations`,
    `  console        ${stack.url}/console`,
    `  MCP            ${stack.url}/mcp  (Streamable HTTP for agents; npx skyforge mcp for stdio)`,
    `  realtime       ${stack.realtimeUrl}  (MQTT over WebSocket; a token from POST /jobs/{id}/subscriptions)`,
    `  DynamoDB       ${stack.endpoints.dynamodb}  (dynalite, table skyforge-jobs)`,
    `  SQS            ${stack.endpoints.sqs}  (fauxqs, queues: ${[...stack.queues.keys()].join(", ")})`,
    `  app            ${shown}  (reloaded when one of its files changes)`,
    `  kinds          ${app.kinds.map((k) => k.name).join(", ")}`,
    poolKinds.length > 0
      ? `  pool kinds     ${poolKinds.map((k) => k.name).join(", ")}  (functions/pool/main.ts, a child process)`
      : "  pool kinds     none",
    `  scheduled      reaper, cleanup, cron every ${tickSeconds} s (SKYFORGE_TICK_SECONDS)`,
    `  data           ${dataDir}  (kept across restarts; ${freshHint} empties it)`,
    "",
    ...tryLines,
    "  operator CLI: npx skyforge help",
    "  Ctrl-C stops everything.",
  ];
}

/** The routes the API serves (lib/api/route-keys.ts, which infra deploys too), wrapped to `width`. */
function routeLines(routes: readonly string[], width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const route of routes) {
    const next = line ? `${line}, ${route}` : route;
    if (line && next.length > width) {
      lines.push(`${line},`);
      line = route;
    } else line = next;
  }
  return line ? [...lines, line] : lines;
}
