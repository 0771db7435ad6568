import type { Context } from "aws-lambda";
import type { HttpEvent } from "../api/http.ts";
import { tierOf } from "../declarations/queue-declaration.ts";
import { buildEngine, type EngineConfig, openDurableRun } from "../engine.ts";
import type { CleanupReport } from "../ops/cleanup.ts";
import type { ReaperReport } from "../ops/reaper.ts";
import type { Engine } from "../services/engine-services.ts";
import { apiHandler } from "./api.ts";
import { cleanupHandler } from "./cleanup.ts";
import { CronHandler } from "./cron.ts";
import { enqueueHandler } from "./enqueue.ts";
import type { HandlerSettings } from "./handler-settings.ts";
import { reaperHandler } from "./reaper.ts";
import { tokenCallbackHandler } from "./token-callback.ts";
import { queueWorker } from "./worker.ts";

/** Every handler of a deployment that runs in the stack's own process (the pool runs in its own). */
export interface Deployment {
  engine: Engine;
  api: ReturnType<typeof apiHandler>;
  /** `POST /tokens/{id}`, the route deployed without IAM auth in a function of its own. */
  tokenCallback: ReturnType<typeof tokenCallbackHandler>;
  /** The Lambda Invoke path by function: "enqueue", and "api" taking what API Gateway would send. */
  functions: Record<"enqueue" | "api", (event: unknown) => Promise<unknown>>;
  /** The Lambda-tier queues' workers, by queue name (the pool-tier queues are the pool's). */
  workers: ReadonlyMap<string, ReturnType<typeof queueWorker>>;
  reaper: () => Promise<ReaperReport>;
  cleanup: () => Promise<CleanupReport>;
  cron: CronHandler;
}

/**
 * The engine and every handler, as functions/*.ts build them one by one (one factory per file in
 * lib/handlers/, so each Lambda bundle keeps only its own handler's code). The local stack runs them
 * all in one process. Beside lib/engine.ts at the top of lib/'s layers: nothing else in lib/ imports
 * lib/handlers/ (docs/architecture.md §2).
 */
export function assembleDeployment(engineConfig: EngineConfig, settings: HandlerSettings): Deployment {
  // One process runs every function here, the jobs' runs among them.
  const engine = buildEngine({ durableRuns: openDurableRun, ...engineConfig });
  const api = apiHandler(engine);
  const lambdaQueues = engine.queues.filter((q) => tierOf(q) === "lambda");
  return {
    engine,
    api,
    tokenCallback: tokenCallbackHandler(engine),
    functions: {
      enqueue: enqueueHandler(engine),
      api: (event) => api(event as HttpEvent, {} as Context),
    },
    workers: new Map(lambdaQueues.map((q) => [q.name, queueWorker(engine, q.name)])),
    reaper: reaperHandler(engine, settings),
    cleanup: cleanupHandler(engine, settings),
    cron: new CronHandler(engine, settings),
  };
}
