import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { Logger } from "@aws-lambda-powertools/logger";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { SQSClient } from "@aws-sdk/client-sqs";
import { s3OnFirstUse } from "../lib/claims/claim-store.ts";
import { systemClock } from "../lib/clock.ts";
import type { App } from "../lib/declarations/define-app.ts";
import { loadPoolKinds } from "../lib/declarations/pool-config.ts";
import type { PoolKindSpec } from "../lib/declarations/pool-kind.ts";
import type { DurableRunOpener } from "../lib/durable/open-run.ts";
import { buildEngine } from "../lib/engine.ts";
import { ConfigError } from "../lib/errors.ts";
import type { PoolSettings } from "../lib/handlers/pool.ts";
import { EmfMetrics } from "../lib/observability/metrics.ts";
import { type ChildUserSettings, DEFAULT_CHILD_UIDS } from "../lib/pool/child-users.ts";
import type { EventSourceControl } from "../lib/queue-control/event-source-control.ts";
import type { Engine } from "../lib/services/engine-services.ts";
import type { RunStamp } from "../lib/store/lease-ops.ts";
import { type Env, numberSetting, requiredSetting } from "./env-settings.ts";
import { realtimeConfigFromEnv } from "./realtime-config.ts";

/**
 * The adapter layer: with env-settings.ts, the only place that reads the environment, each value
 * checked when read (a bad one is a ConfigError naming its variable). The app is given by the
 * caller (functions/handlers.ts, from the deployment's own app module), never imported here, so a
 * Lambda bundle holds the app it was built for and no other. Infra sets (none is a secret):
 * - SKYFORGE_TABLE;
 * - SKYFORGE_CLAIMS_BUCKET, the bucket of payloads and results over 8 KiB (lib/claims/);
 * - SKYFORGE_QUEUE_URLS, a JSON map of queue name → url;
 * - SKYFORGE_DLQ_URLS, the same for dead-letter queues (reaper and API);
 * - SKYFORGE_EVENT_SOURCE_MAPPINGS, queue name → the worker's event source mapping UUID (only for
 *   the functions that pause queues or change their concurrency: API and reaper, which pass
 *   `eventSources`; the others ignore it);
 * - SKYFORGE_POOL_CONFIG, optionally, the path of a JSON file that adds or overrides pool kinds;
 * - SKYFORGE_WORKER_QUEUE, the queue a worker function serves;
 * - SKYFORGE_API_URL, optionally, the HTTP API's base URL, which a durable job's token url starts
 *   with (on the functions that run jobs: workers and pool; the API's for the same views). Without
 *   it a token's url is a bare path.
 * - SKYFORGE_REALTIME_*, realtime on AWS (functions/realtime-config.ts): absent, nothing is published.
 * Optional settings with their defaults: see handlerSettingsFromEnv and poolProcessFromEnv.
 */

/** What the readers below need of the app: its queues, and for the pool kinds its pool kinds. */
export type AppQueues = Pick<App, "queues">;
export type AppPoolKinds = Pick<App, "queues" | "poolKinds">;

function jsonMapSetting(env: Env, name: string): Map<string, string> | undefined {
  const raw = env[name];
  if (!raw) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    parsed = undefined;
  }
  const entries =
    parsed && typeof parsed === "object" && !Array.isArray(parsed) ? Object.entries(parsed) : [];
  if (!parsed || entries.some(([, v]) => typeof v !== "string")) {
    throw new ConfigError(`${name} must be a JSON object of names to strings, got ${JSON.stringify(raw)}`);
  }
  return new Map(entries as [string, string][]);
}

/** The queue a worker function serves (infra/workers.ts sets it per function). */
export function workerQueueFromEnv(app: AppQueues, env: Env = process.env): string {
  const name = requiredSetting(env, "SKYFORGE_WORKER_QUEUE");
  if (!app.queues.some((q) => q.name === name)) {
    throw new ConfigError(`SKYFORGE_WORKER_QUEUE names an undeclared queue: ${name}`);
  }
  return name;
}

/**
 * How children run as users of their own (lib/pool/child-users.ts): SKYFORGE_POOL_CHILD_USERS,
 * "required" (the Fargate task, infra/pool.ts) or "preferred" (the default: npm start);
 * SKYFORGE_POOL_CHILD_FIRST_UID moves their uid range (2^24 uids) where a host needs it elsewhere.
 */
export function childUsersFromEnv(env: Env = process.env): ChildUserSettings {
  const separate = env.SKYFORGE_POOL_CHILD_USERS ?? "preferred";
  if (separate !== "required" && separate !== "preferred") {
    throw new ConfigError(`SKYFORGE_POOL_CHILD_USERS must be "required" or "preferred", got "${separate}"`);
  }
  const first = env.SKYFORGE_POOL_CHILD_FIRST_UID;
  const firstUid = first === undefined ? DEFAULT_CHILD_UIDS.firstUid : Number(first);
  if (
    !Number.isSafeInteger(firstUid) ||
    firstUid < 1 ||
    firstUid + DEFAULT_CHILD_UIDS.uidCount > 2 ** 32 - 1
  ) {
    throw new ConfigError(
      `SKYFORGE_POOL_CHILD_FIRST_UID must be a uid from 1 to 2^32 - 2^24 - 1, got "${first}"`,
    );
  }
  return { separate, firstUid, uidCount: DEFAULT_CHILD_UIDS.uidCount, homeParent: tmpdir() };
}

export interface PoolProcessSettings {
  /** How long running jobs get after SIGTERM. */
  drainSeconds: number;
  /** How often the pool's metrics are flushed. */
  metricsEverySeconds: number;
  runner: PoolSettings;
}

/**
 * The Fargate pool task's settings. SKYFORGE_POOL_DRAIN_SECONDS (25): how long running jobs get
 * after SIGTERM; keep it under the ECS task's stopTimeout (30 s by default, 120 s at most). The long
 * poll in progress (SKYFORGE_POOL_WAIT_SECONDS, 20 s by default, at most SQS's 20) is waited out in
 * the same window, not aborted. SKYFORGE_POOL_METRICS_SECONDS (60): how often metrics are flushed.
 */
export function poolProcessFromEnv(env: Env = process.env): PoolProcessSettings {
  return {
    drainSeconds: numberSetting(env, "SKYFORGE_POOL_DRAIN_SECONDS", { fallback: 25, min: 0 }),
    metricsEverySeconds: numberSetting(env, "SKYFORGE_POOL_METRICS_SECONDS", {
      fallback: 60,
      min: 0,
      above: true,
    }),
    runner: {
      // The pool's own environment: children get an allowlisted part of it (lib/pool/child-environment.ts).
      baseEnv: env,
      cwd: process.cwd(),
      waitSeconds: numberSetting(env, "SKYFORGE_POOL_WAIT_SECONDS", {
        fallback: 20,
        min: 0,
        max: 20,
        whole: true,
      }),
      childUsers: childUsersFromEnv(env),
    },
  };
}

/** The pool kinds: the app's, with the operator's SKYFORGE_POOL_CONFIG file laid over them. */
export function poolKindsFromEnv(app: AppPoolKinds, env: Env = process.env): PoolKindSpec[] {
  return loadPoolKinds(app.queues, app.poolKinds, env.SKYFORGE_POOL_CONFIG, (path) =>
    readFileSync(path, "utf8"),
  );
}

/** SKYFORGE_API_URL: an absolute http(s) URL (infra sets the API's own); anything else is a ConfigError. */
export function apiUrlSetting(env: Env): string {
  const raw = requiredSetting(env, "SKYFORGE_API_URL");
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== "https:" && url.protocol !== "http:") || url.search || url.hash)
    throw new ConfigError(`SKYFORGE_API_URL must be an http(s) URL without a query, got "${raw}"`);
  return raw.replace(/\/+$/, "");
}

export interface EngineFromEnvOptions {
  /**
   * Builds the event source control from SKYFORGE_EVENT_SOURCE_MAPPINGS. Passed in by the entry
   * points that need it (functions/lambda-event-sources.ts), so the Lambda client is bundled and
   * loaded only where it is used.
   */
  eventSources?: (mappings: ReadonlyMap<string, string>) => EventSourceControl;
  /** Who runs this process's attempts (Engine.runner): the worker's Lambda invocation, the pool's task. */
  runner?: () => RunStamp;
  /** Durable jobs' runs, given by the entry points that run jobs (the worker, the pool): EngineConfig.durableRuns. */
  durableRuns?: DurableRunOpener;
}

/** The app's engine (with the pool kinds in force, read once) and its logger. */
export function engineFromEnv(
  app: App,
  serviceName: string,
  options: EngineFromEnvOptions = {},
  env: Env = process.env,
): { engine: Engine; logger: Logger } {
  const logger = new Logger({ serviceName });
  const dlqUrls = jsonMapSetting(env, "SKYFORGE_DLQ_URLS");
  const mappings = jsonMapSetting(env, "SKYFORGE_EVENT_SOURCE_MAPPINGS");
  const eventSources = mappings && options.eventSources?.(mappings);
  const poolKinds = poolKindsFromEnv(app, env);
  const queueUrls = jsonMapSetting(env, "SKYFORGE_QUEUE_URLS");
  const realtime = realtimeConfigFromEnv(env);
  if (!queueUrls) throw new ConfigError("SKYFORGE_QUEUE_URLS is not set");
  const engine = buildEngine({
    app,
    poolKinds,
    dynamodb: new DynamoDBClient({}),
    sqs: new SQSClient({}),
    // AWS_ENDPOINT_URL_S3 points it elsewhere (the local stack's pool); path-style there, as AWS allows.
    // Made on first use: only claims over 8 KiB need S3, and its package is slow to load.
    s3: s3OnFirstUse(
      ({ S3Client }) => new S3Client({ forcePathStyle: env.AWS_ENDPOINT_URL_S3 !== undefined }),
    ),
    claimsBucket: requiredSetting(env, "SKYFORGE_CLAIMS_BUCKET"),
    table: requiredSetting(env, "SKYFORGE_TABLE"),
    queueUrls,
    ...(dlqUrls ? { dlqUrls } : {}),
    ...(eventSources ? { eventSources } : {}),
    ...(options.runner ? { runner: options.runner } : {}),
    ...(options.durableRuns ? { durableRuns: options.durableRuns } : {}),
    ...(env.SKYFORGE_API_URL ? { tokenUrlBase: apiUrlSetting(env) } : {}),
    ...(realtime ? { realtime } : {}),
    clock: systemClock,
    // Logs carry the function's own service name; metrics share one, so dashboards can name them.
    metrics: new EmfMetrics(),
    log: {
      debug: (message, attributes) => logger.debug(message, attributes ?? {}),
      info: (message, attributes) => logger.info(message, attributes ?? {}),
      warn: (message, attributes) => logger.warn(message, attributes ?? {}),
      error: (message, attributes) => logger.error(message, attributes ?? {}),
    },
  });
  return { engine, logger };
}
