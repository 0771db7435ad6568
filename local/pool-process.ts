import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { errorFields, type Log } from "../lib/observability/log.ts";
import { INHERITED_NAMES } from "../lib/pool/child-environment.ts";
import { dieWithParentPrefix } from "../lib/pool/child-program.ts";
import { POOL_BAD_CONFIG_EXIT_CODE } from "../lib/pool/pool-options.ts";
import { CLAIMS_BUCKET, LOCAL_AWS } from "./emulators.ts";

export interface PoolProcessOptions {
  /** The pool's entry point as a command, e.g. [node, "--import", "tsx", "functions/pool/main.ts"]. */
  command: readonly string[];
  /**
   * The environment it is started from (the caller's own): only POOL_INHERITED_NAMES are taken from
   * it; the stack adds its endpoints, queues and local keys.
   */
  baseEnv: Readonly<Record<string, string | undefined>>;
  /**
   * Settings the stack's owner gives the pool itself, set as they are (not taken from the caller's
   * environment): the app module it runs (SKYFORGE_APP_MODULE), its TypeScript loader's config.
   */
  settings?: Readonly<Record<string, string>>;
  endpoints: { dynamodb: string; sqs: string };
  table: string;
  queueUrls: ReadonlyMap<string, string>;
  dlqUrls: ReadonlyMap<string, string>;
  /** The local API's URL, as SKYFORGE_API_URL: durable jobs' token urls start with it. */
  apiUrl?: string;
  /** The realtime broker's topic prefix and publish path: the pool publishes its jobs' events there. */
  realtime?: { prefix: string; publishUrl: string };
  /** Seconds running jobs get after the stop signal, as SKYFORGE_POOL_DRAIN_SECONDS. */
  drainSeconds: number;
  /** The pool's ReceiveMessage wait, as SKYFORGE_POOL_WAIT_SECONDS: short locally, so a stop is quick. */
  waitSeconds: number;
  log: Log;
}

/**
 * The names the pool takes from the environment it is started from: its children's allowlist
 * (lib/pool/child-environment.ts), because a child that runs as the pool's own user (no setpriv, or
 * not root) can read the pool's /proc/<pid>/environ, and the pool's own settings read by
 * functions/engine-config.ts (names and paths, never secrets). Everything else stays out, a real
 * AWS_SESSION_TOKEN or AWS_PROFILE above all: the pool signs with the local keys for the emulators.
 */
export const POOL_INHERITED_NAMES = [
  ...INHERITED_NAMES,
  "SKYFORGE_POOL_CONFIG",
  "SKYFORGE_POOL_CHILD_USERS",
  "SKYFORGE_POOL_CHILD_FIRST_UID",
  "SKYFORGE_POOL_METRICS_SECONDS",
  "LOG_LEVEL",
] as const;

/** The pool's whole environment: POOL_INHERITED_NAMES from `baseEnv`, then the stack's endpoints, queues and local keys. */
export function poolEnvironment(o: Omit<PoolProcessOptions, "command" | "log">): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of POOL_INHERITED_NAMES) {
    const value = o.baseEnv[name];
    if (value !== undefined) env[name] = value;
  }
  return {
    ...env,
    ...o.settings,
    AWS_REGION: LOCAL_AWS.region,
    AWS_ACCESS_KEY_ID: LOCAL_AWS.credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: LOCAL_AWS.credentials.secretAccessKey,
    AWS_ENDPOINT_URL_DYNAMODB: o.endpoints.dynamodb,
    AWS_ENDPOINT_URL_SQS: o.endpoints.sqs,
    // The emulator serves S3 on its SQS endpoint.
    AWS_ENDPOINT_URL_S3: o.endpoints.sqs,
    SKYFORGE_TABLE: o.table,
    SKYFORGE_CLAIMS_BUCKET: CLAIMS_BUCKET,
    SKYFORGE_QUEUE_URLS: JSON.stringify(Object.fromEntries(o.queueUrls)),
    SKYFORGE_DLQ_URLS: JSON.stringify(Object.fromEntries(o.dlqUrls)),
    SKYFORGE_POOL_DRAIN_SECONDS: String(o.drainSeconds),
    SKYFORGE_POOL_WAIT_SECONDS: String(o.waitSeconds),
    ...(o.apiUrl ? { SKYFORGE_API_URL: o.apiUrl } : {}),
    // As on AWS (functions/realtime-config.ts), its data-plane endpoint pointed at the local broker.
    ...(o.realtime
      ? {
          SKYFORGE_REALTIME_PREFIX: o.realtime.prefix,
          SKYFORGE_REALTIME_ENDPOINT: new URL(o.realtime.publishUrl).hostname,
          AWS_ENDPOINT_URL_IOT_DATA_PLANE: o.realtime.publishUrl,
        }
      : {}),
  };
}

/** A died pool is restarted after `firstDelayMs`, doubling up to `maxDelayMs`; a run of `stableMs` resets it. */
export interface RestartPolicy {
  firstDelayMs: number;
  maxDelayMs: number;
  stableMs: number;
}

export const DEFAULT_RESTART: RestartPolicy = { firstDelayMs: 1000, maxDelayMs: 30_000, stableMs: 60_000 };

/** The wait before restart number `n` (1 for the first after a stable run). */
export function restartDelayMs(n: number, policy: RestartPolicy = DEFAULT_RESTART): number {
  return Math.min(policy.maxDelayMs, policy.firstDelayMs * 2 ** Math.max(0, n - 1));
}

export interface PoolProcess {
  /** The pool process running now (it changes when a died pool is restarted). */
  readonly pid: number | undefined;
  /** How many times a died pool was restarted. */
  readonly restarts: number;
  /** SIGTERM, as ECS sends it; resolves with the exit code once the pool has drained. Never restarts it. */
  stop(): Promise<number | null>;
}

/** How many of the pool's last output lines a restart or a refusal quotes. */
const LAST_LINES = 20;

/**
 * The pool as the local stack runs it: the same entry point as the Fargate task, in its own process,
 * pointed at the emulators through the SDK's standard endpoint variables. Its log lines go to `log`.
 *
 * It is supervised, as ECS would: a pool that dies unexpectedly is restarted after a backoff (1 s
 * doubling to 30 s, reset once it has run for a minute), and each restart is logged. A deliberate
 * stop is not restarted, nor a pool that refused its configuration (exit code 78: a restart can't
 * fix it). Where Linux has setpriv, the pool is spawned with a parent-death signal, so it never
 * outlives the stack (and its children never outlive it).
 */
export function startPoolProcess(o: PoolProcessOptions): PoolProcess {
  const policy = DEFAULT_RESTART;
  const via = dieWithParentPrefix(process.platform, o.baseEnv.PATH);
  const [program, ...args] = [...via, ...o.command];
  const env = poolEnvironment(o);

  let current: ChildProcess;
  let exited: Promise<number | null>;
  let stopping = false;
  let restarts = 0;
  /** Restarts since the pool last ran for `stableMs`. */
  let unstable = 0;
  let restartTimer: NodeJS.Timeout | undefined;
  const lastLines: string[] = [];

  const launch = () => {
    const startedAt = Date.now();
    const child = spawn(program as string, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    current = child;
    exited = new Promise((resolve) => {
      child.once("exit", (code) => resolve(code));
      child.once("error", () => resolve(null));
    });
    for (const stream of [child.stdout, child.stderr]) {
      if (!stream) continue;
      createInterface({ input: stream }).on("line", (line) => {
        lastLines.push(line);
        if (lastLines.length > LAST_LINES) lastLines.shift();
        relay(o.log, line);
      });
    }
    // The program itself is missing: no exit follows, and a restart would fail the same way.
    child.once("error", (err) => o.log.error("could not start the pool process", errorFields(err)));
    child.once("exit", (code, signal) => {
      if (stopping) {
        if (code !== 0) o.log.warn("pool process exited", { code, signal });
        return;
      }
      if (code === POOL_BAD_CONFIG_EXIT_CODE) {
        o.log.error("the pool refused its configuration; not restarting it", {
          code,
          output: [...lastLines],
        });
        return;
      }
      if (Date.now() - startedAt >= policy.stableMs) unstable = 0;
      unstable++;
      restarts++;
      const inMs = restartDelayMs(unstable, policy);
      o.log.warn("pool process died; restarting it", {
        code,
        signal,
        restart: restarts,
        inMs,
        lastOutput: lastLines.slice(-5),
      });
      restartTimer = setTimeout(() => {
        restartTimer = undefined;
        if (stopping) return;
        launch();
        o.log.warn("pool process restarted", { pid: current.pid, restart: restarts });
      }, inMs);
    });
  };
  launch();

  return {
    get pid() {
      return current.pid;
    },
    get restarts() {
      return restarts;
    },
    stop: async () => {
      stopping = true;
      if (restartTimer) clearTimeout(restartTimer);
      restartTimer = undefined;
      if (current.exitCode === null && current.signalCode === null) current.kill("SIGTERM");
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
