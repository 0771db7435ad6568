import { Logger } from "@aws-lambda-powertools/logger";
import { app } from "../app/index.ts";
import { poolKindsFromEnv } from "../functions/runtime-config.ts";
import { startLocalStack } from "../local/stack.ts";

/** `npm start`: the embedded local stack. No AWS, no Docker, no Java. */
const port = Number(process.env.PORT ?? 3000);
const logger = new Logger({
  serviceName: "skyforge-local",
  logLevel: (process.env.LOG_LEVEL ?? "WARN") as "WARN",
});
const log = {
  debug: (m: string, a?: Record<string, unknown>) => logger.debug(m, a ?? {}),
  info: (m: string, a?: Record<string, unknown>) => logger.info(m, a ?? {}),
  warn: (m: string, a?: Record<string, unknown>) => logger.warn(m, a ?? {}),
  error: (m: string, a?: Record<string, unknown>) => logger.error(m, a ?? {}),
};

const tickSeconds = Number(process.env.SKYFORGE_TICK_SECONDS ?? 60);
if (!Number.isFinite(tickSeconds) || tickSeconds <= 0) {
  console.error(
    `SKYFORGE_TICK_SECONDS must be a positive number of seconds, got "${process.env.SKYFORGE_TICK_SECONDS}"`,
  );
  process.exit(2);
}
// The operator's SKYFORGE_POOL_CONFIG file adds kinds the local API must accept, as on AWS.
const poolKinds = poolKindsFromEnv();
const stack = await startLocalStack({
  app,
  poolKinds,
  port,
  log,
  tickSeconds,
  // The Fargate task's entry point, run by this Node (24) through tsx, with the caller's environment
  // (PATH for python3, SKYFORGE_POOL_CONFIG for extra kinds).
  pool: {
    command: [process.execPath, "--import", "tsx", "functions/pool/main.ts"],
    baseEnv: process.env,
    drainSeconds: 10,
    waitSeconds: 2,
  },
});
const lines = [
  `skyforge local stack (node ${process.version})`,
  `  HTTP API       ${stack.url}  (POST /jobs, POST /jobs/batch, GET /jobs/{id}, GET /jobs, POST /jobs/{id}/cancel, POST /jobs/{id}/retry, GET /health)`,
  "                 (GET /queues, POST /queues/{name}/pause|resume, PATCH /queues/{name}, GET|PUT|DELETE /schedules/{name})",
  `  Lambda Invoke  ${stack.url}/2015-03-31/functions/enqueue/invocations`,
  `  DynamoDB       ${stack.endpoints.dynamodb}  (dynalite, table skyforge-jobs)`,
  `  SQS            ${stack.endpoints.sqs}  (fauxqs, queues: ${[...stack.queues.keys()].join(", ")})`,
  `  kinds          ${app.kinds.map((k) => k.name).join(", ")}  (app/kinds/)`,
  `  pool kinds     ${poolKinds.map((k) => k.name).join(", ")}  (functions/pool/main.ts, a child process)`,
  `  scheduled      reaper, cleanup, cron every ${tickSeconds} s (SKYFORGE_TICK_SECONDS)`,
  "",
  `  try: curl -s -X POST ${stack.url}/jobs -H 'content-type: application/json' -d '{"kind":"echo","payload":{"hello":"world"}}'`,
  `  heavy job: curl -s -X POST ${stack.url}/jobs -H 'content-type: application/json' -d '{"kind":"py-digest","payload":{"text":"hello","rounds":100000}}'`,
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
