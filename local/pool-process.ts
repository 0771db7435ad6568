import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import type { Log } from "../lib/observability/log.ts";
import { LOCAL_AWS } from "./emulators.ts";

export interface PoolProcessOptions {
  /** The pool's entry point as a command, e.g. [node, "--import", "tsx", "functions/pool/main.ts"]. */
  command: readonly string[];
  /** The environment to start from (the caller's own); the stack adds its endpoints and queues. */
  baseEnv: Readonly<Record<string, string | undefined>>;
  endpoints: { dynamodb: string; sqs: string };
  table: string;
  queueUrls: ReadonlyMap<string, string>;
  dlqUrls: ReadonlyMap<string, string>;
  /** Seconds running jobs get after the stop signal, as SKYFORGE_POOL_DRAIN_SECONDS. */
  drainSeconds: number;
  /** The pool's ReceiveMessage wait, as SKYFORGE_POOL_WAIT_SECONDS: short locally, so a stop is quick. */
  waitSeconds: number;
  log: Log;
}

export interface PoolProcess {
  pid: number | undefined;
  /** SIGTERM, as ECS sends it; resolves with the exit code once the pool has drained. */
  stop(): Promise<number | null>;
}

/**
 * The pool as the local stack runs it: the same entry point as the Fargate task, in its own process,
 * pointed at the emulators through the SDK's standard endpoint variables. Its log lines go to `log`.
 */
export function startPoolProcess(o: PoolProcessOptions): PoolProcess {
  const [program, ...args] = o.command;
  const child: ChildProcess = spawn(program as string, args, {
    env: {
      ...o.baseEnv,
      AWS_REGION: LOCAL_AWS.region,
      AWS_ACCESS_KEY_ID: LOCAL_AWS.credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: LOCAL_AWS.credentials.secretAccessKey,
      AWS_ENDPOINT_URL_DYNAMODB: o.endpoints.dynamodb,
      AWS_ENDPOINT_URL_SQS: o.endpoints.sqs,
      SKYFORGE_TABLE: o.table,
      SKYFORGE_QUEUE_URLS: JSON.stringify(Object.fromEntries(o.queueUrls)),
      SKYFORGE_DLQ_URLS: JSON.stringify(Object.fromEntries(o.dlqUrls)),
      SKYFORGE_POOL_DRAIN_SECONDS: String(o.drainSeconds),
      SKYFORGE_POOL_WAIT_SECONDS: String(o.waitSeconds),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  for (const stream of [child.stdout, child.stderr]) {
    if (stream) createInterface({ input: stream }).on("line", (line) => relay(o.log, line));
  }
  child.once("exit", (code, signal) => {
    if (code !== 0) o.log.warn("pool process exited", { code, signal });
  });
  return {
    pid: child.pid,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      return exited;
    },
  };
}

/** The pool logs JSON through Powertools; its warnings and errors surface at the same level here. */
function relay(log: Log, line: string): void {
  let level: unknown;
  try {
    level = (JSON.parse(line) as { level?: unknown }).level;
  } catch {
    // not JSON: a child's or Node's own output
  }
  if (level === "ERROR") log.error("pool", { line });
  else if (level === "WARN") log.warn("pool", { line });
  else log.info("pool", { line });
}
