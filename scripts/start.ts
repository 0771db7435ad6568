import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { Logger } from "@aws-lambda-powertools/logger";
import { app } from "../app/index.ts";
import {
  type LocalStackSettings,
  localStackSettingsFromEnv,
  poolKindsFromEnv,
} from "../functions/runtime-config.ts";
import { API_ROUTE_KEYS } from "../lib/api/route-keys.ts";
import { ConfigError } from "../lib/errors.ts";
import { startLocalStack } from "../local/stack.ts";

/**
 * `npm start`: the embedded local stack. No AWS, no Docker, no Java. Its table and queues live in
 * `.skyforge/` at the project root (SKYFORGE_DATA_DIR elsewhere), so they survive a restart;
 * `npm start -- --fresh` starts from nothing.
 */
let fresh: boolean;
try {
  fresh = parseArgs({ options: { fresh: { type: "boolean", default: false } } }).values.fresh;
} catch (err) {
  console.error(`${(err as Error).message}\nusage: npm start [-- --fresh]`);
  process.exit(2);
}

/**
 * A configuration that can't run (a bad SKYFORGE_POOL_CONFIG, a data directory in use, a PORT another
 * process listens on): its message and what to do, no trace.
 */
function refuse(err: unknown): never {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === "EADDRINUSE") {
    const inUse = Number((err as { port?: number }).port);
    console.error(
      `port ${inUse} is in use: stop the other process or set PORT=${inUse < 65535 ? inUse + 1 : 0}`,
    );
    process.exit(2);
  }
  if (!(err instanceof ConfigError)) throw err;
  console.error(err.message);
  process.exit(2);
}

// One checked read of the environment: a bad value is one message naming the variable, exit 2.
// The operator's SKYFORGE_POOL_CONFIG file adds kinds the local API must accept, as on AWS.
let settings: LocalStackSettings;
let poolKinds: ReturnType<typeof poolKindsFromEnv>;
try {
  settings = localStackSettingsFromEnv();
  poolKinds = poolKindsFromEnv();
} catch (err) {
  refuse(err);
}
const { port, tickSeconds } = settings;
const dataDir = settings.dataDir
  ? resolve(settings.dataDir)
  : fileURLToPath(new URL("../.skyforge", import.meta.url));
const logger = new Logger({ serviceName: "skyforge-local", logLevel: settings.logLevel });
const log = {
  debug: (m: string, a?: Record<string, unknown>) => logger.debug(m, a ?? {}),
  info: (m: string, a?: Record<string, unknown>) => logger.info(m, a ?? {}),
  warn: (m: string, a?: Record<string, unknown>) => logger.warn(m, a ?? {}),
  error: (m: string, a?: Record<string, unknown>) => logger.error(m, a ?? {}),
};

const stack = await startLocalStack({
  app,
  poolKinds,
  port,
  log,
  tickSeconds,
  dataDir,
  fresh,
  // The Fargate task's entry point, run by this Node (24) through tsx. Of the caller's environment it
  // gets only its children's allowlist and its own settings (PATH for python3, SKYFORGE_POOL_CONFIG
  // for extra kinds): POOL_INHERITED_NAMES in local/pool-process.ts.
  pool: {
    command: [process.execPath, "--import", "tsx", "functions/pool/main.ts"],
    baseEnv: process.env,
    drainSeconds: 10,
    waitSeconds: 2,
  },
}).catch(refuse);
const lines = [
  `skyforge local stack (node ${process.version})`,
  `  HTTP API       ${stack.url}`,
  ...routeLines(API_ROUTE_KEYS, 100).map((l) => `                 ${l}`),
  `  Lambda Invoke  ${stack.url}/2015-03-31/functions/{enqueue,api}/invocations`,
  `  console        ${stack.url}/console`,
  `  DynamoDB       ${stack.endpoints.dynamodb}  (dynalite, table skyforge-jobs)`,
  `  SQS            ${stack.endpoints.sqs}  (fauxqs, queues: ${[...stack.queues.keys()].join(", ")})`,
  `  kinds          ${app.kinds.map((k) => k.name).join(", ")}  (app/kinds/)`,
  `  pool kinds     ${poolKinds.map((k) => k.name).join(", ")}  (functions/pool/main.ts, a child process)`,
  `  scheduled      reaper, cleanup, cron every ${tickSeconds} s (SKYFORGE_TICK_SECONDS)`,
  `  data           ${dataDir}  (kept across restarts; npm start -- --fresh empties it)`,
  "",
  `  try: curl -s -X POST ${stack.url}/jobs -H 'content-type: application/json' -d '{"kind":"echo","payload":{"hello":"world"}}'`,
  `  heavy job: curl -s -X POST ${stack.url}/jobs -H 'content-type: application/json' -d '{"kind":"py-digest","payload":{"text":"hello","rounds":100000}}'`,
  "  operator CLI: npx skyforge help",
  "  Ctrl-C stops everything.",
];
console.log(lines.join("\n"));

let stopping = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    console.log("\nstopping…");
    stack.stop().then(
      () => process.exit(0),
      (err) => {
        console.error("shutdown failed", err);
        process.exit(1);
      },
    );
  });
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
