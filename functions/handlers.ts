import { hostname } from "node:os";
import type { Context, SQSEvent } from "aws-lambda";
import type { App } from "../lib/declarations/define-app.ts";
import { openDurableRun } from "../lib/engine.ts";
import { ConfigError } from "../lib/errors.ts";
import { apiHandler as apiRoutes } from "../lib/handlers/api.ts";
import { cleanupHandler as cleanupRun } from "../lib/handlers/cleanup.ts";
import { CronHandler } from "../lib/handlers/cron.ts";
import { enqueueHandler as enqueueRequests } from "../lib/handlers/enqueue.ts";
import { poolRunner } from "../lib/handlers/pool.ts";
import { reaperHandler as reaperRun } from "../lib/handlers/reaper.ts";
import { tokenCallbackHandler as tokenCallbackRoute } from "../lib/handlers/token-callback.ts";
import { lambdaRunStamp, queueWorker } from "../lib/handlers/worker.ts";
import { errorFields } from "../lib/observability/log.ts";
import { POOL_BAD_CONFIG_EXIT_CODE } from "../lib/pool/pool-options.ts";
import { engineFromEnv, poolProcessFromEnv, workerQueueFromEnv } from "./engine-config.ts";
import { handlerSettingsFromEnv } from "./env-settings.ts";
import { lambdaEventSources } from "./lambda-event-sources.ts";

export { realtimeAuthorizerHandler, realtimeReplayHandler } from "./realtime-handlers.ts";

/**
 * The deployed entry points as factories of the app they run. Each Lambda function's handler is an
 * entry generated for the deployment (infra/entries.ts): it imports the deployment's app module and
 * exports `handler = workerHandler(app)` (or the factory of its function; the realtime authorizer's
 * imports no app, its factory uses none), so its bundle holds that
 * app's kinds and the engine, nothing else. Called once, at the module's init: the engine and its
 * clients are built there, as a cold start should, from the environment infra set
 * (functions/engine-config.ts).
 */

/** SQS event source (partial batch responses on), for the queue SKYFORGE_WORKER_QUEUE names. */
export function workerHandler(app: App) {
  /** The invocation in progress: a Lambda environment runs one at a time. */
  let invocation: Context | undefined;
  const functionName = process.env.AWS_LAMBDA_FUNCTION_NAME ?? "worker";
  const queueName = workerQueueFromEnv(app);
  const { engine } = engineFromEnv(app, "skyforge-worker", {
    runner: () => lambdaRunStamp(functionName, invocation, Date.now()),
    durableRuns: openDurableRun,
  });
  const worker = queueWorker(engine, queueName);
  return async (event: SQSEvent, context?: Context) => {
    invocation = context;
    try {
      return await worker(event);
    } finally {
      invocation = undefined;
      // Realtime's publishes still in flight go out before Lambda freezes the environment (§25).
      await engine.realtime.drain();
    }
  };
}

/** HTTP API (API Gateway v2 payload format 2.0). */
export function apiHandler(app: App) {
  const { engine } = engineFromEnv(app, "skyforge-api", { eventSources: lambdaEventSources });
  const routes = apiRoutes(engine);
  return async (event: Parameters<typeof routes>[0], context: Context) => {
    try {
      return await routes(event, context);
    } finally {
      // A cancel's realtime publish goes out before Lambda freezes the environment (§25).
      await engine.realtime.drain();
    }
  };
}

/** Direct invoke: an EnqueueRequest or { jobs: [...] } (≤ 100). */
export function enqueueHandler(app: App) {
  const { engine } = engineFromEnv(app, "skyforge-enqueue");
  const enqueue = enqueueRequests(engine);
  return async (event: unknown) => {
    try {
      return await enqueue(event);
    } finally {
      engine.metrics.flush();
      // Its jobs' queued goes out before Lambda freezes the environment (§25).
      await engine.realtime.drain();
    }
  };
}

/**
 * `POST /tokens/{id}` alone (API Gateway v2 payload format 2.0), the one route without IAM auth:
 * completes the token its url names and resumes its job, nothing else (infra/api.ts).
 */
export function tokenCallbackHandler(app: App) {
  const { engine } = engineFromEnv(app, "skyforge-token-callback");
  return tokenCallbackRoute(engine);
}

/** EventBridge Scheduler, every minute: promotes, drains DLQs, repairs event sources. Returns (and logs) what it did. */
export function reaperHandler(app: App) {
  const settings = handlerSettingsFromEnv();
  const { engine, logger } = engineFromEnv(app, "skyforge-reaper", { eventSources: lambdaEventSources });
  const reaper = reaperRun(engine, settings);
  return async () => {
    try {
      const report = await reaper();
      logger.info("reaper ran", { report });
      return report;
    } finally {
      // A DLQ drain's ends and a group's progress go out before Lambda freezes the environment (§25).
      await engine.realtime.drain();
    }
  };
}

/** EventBridge Scheduler, every minute: purges dead jobs past retention. Returns (and logs) what it purged. */
export function cleanupHandler(app: App) {
  const settings = handlerSettingsFromEnv();
  const { engine, logger } = engineFromEnv(app, "skyforge-cleanup");
  const cleanup = cleanupRun(engine, settings);
  return async () => {
    const report = await cleanup();
    logger.info("cleanup ran", { report });
    return report;
  };
}

/**
 * EventBridge Scheduler, every minute: the leader enqueues every due fire. Syncs the declared
 * schedules on the container's first tick: a deploy brings new code, hence new containers.
 */
export function cronHandler(app: App) {
  const settings = handlerSettingsFromEnv();
  const { engine, logger } = engineFromEnv(app, "skyforge-cron");
  const cron = new CronHandler(engine, settings);
  return async (_event: unknown, context: Context) => {
    try {
      const report = await cron.run(context.awsRequestId);
      logger.info("cron ran", { report });
      return report;
    } finally {
      engine.metrics.flush();
      // Its fires' queued goes out before Lambda freezes the environment (§25).
      await engine.realtime.drain();
    }
  };
}

/**
 * The Fargate pool task's process (`node pool.mjs` in infra/pool.Dockerfile; `npm start` runs it
 * locally): its settings (drain, long poll, metrics, child users) are read and checked by
 * poolProcessFromEnv. A configuration the pool can't run at all (a bad SKYFORGE_POOL_CONFIG, a bad
 * setting) ends it with POOL_BAD_CONFIG_EXIT_CODE, which a supervisor doesn't restart; a kind whose
 * program is missing is refused by the runner, which serves the others.
 */
export function startPool(app: App): void {
  const { logger, kinds, runner, settings } = poolStartUp(app);
  const { drainSeconds, metricsEverySeconds } = settings;
  // Where setpriv is missing, children don't die with the pool by themselves: on any exit that
  // skipped the drain (an uncaught error, process.exit), they are killed here. SIGKILL skips this too.
  process.on("exit", () => runner.killChildren());
  runner.start();
  const flusher = setInterval(() => runner.flushMetrics(), metricsEverySeconds * 1000);
  logger.info("pool started", {
    kinds: kinds.filter((k) => !runner.refused.has(k.name)).map((k) => `${k.name}(${k.soft}/${k.hard})`),
    refused: [...runner.refused.keys()],
    drainSeconds,
  });

  let stopping = false;
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      clearInterval(flusher);
      logger.info("draining", { signal, drainSeconds });
      runner.stop(drainSeconds * 1000).then(
        (report) => {
          logger.info("pool stopped", { ...report });
          process.exit(0);
        },
        (err) => {
          logger.error("drain failed", errorFields(err));
          process.exit(1);
        },
      );
    });
  }
}

/** The pool's engine and runner; a configuration it can't run ends the process (see startPool). */
function poolStartUp(app: App) {
  try {
    const settings = poolProcessFromEnv();
    // A pool task's attempts name its host (the task) and process in their history.
    const { engine, logger } = engineFromEnv(app, "skyforge-pool", {
      runner: () => ({ runner: `pool:${hostname()}/${process.pid}` }),
      durableRuns: openDurableRun,
    });
    const runner = poolRunner(engine, settings.runner);
    return { logger, kinds: engine.poolKinds, runner, settings };
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    // Restarting can't fix it: the exit code tells a supervisor (npm start's) not to try.
    console.error(err.message);
    process.exit(POOL_BAD_CONFIG_EXIT_CODE);
  }
}
