import type { DurableContext } from "../job/durable.ts";
import type { DurableRunHandle, RetentionDays } from "../services/durable-service.ts";
import type { JobItem } from "../store/job-item.ts";
import { invokeChild } from "./child-jobs.ts";
import type { DurableDeps } from "./durable-deps.ts";
import { DurableRun } from "./durable-run.ts";
import { invokeMany as invokeManyChildren } from "./invoke-many.ts";

/**
 * A durable job's run: its context (steps, sleeps, waits, child jobs) over the job's journal. Only
 * the functions that run jobs (the worker, the pool, the local stack) give it to their engine
 * (EngineConfig.durableRuns): the API, the enqueue and the scheduled functions never run a handler,
 * and their bundles leave the run's code out (the API's was over its 400 KiB budget with it).
 */
export function openDurableRun(
  deps: DurableDeps,
  item: JobItem,
  fence: string,
  live: () => boolean,
  retentionDays: RetentionDays,
): DurableRunHandle {
  const run = new DurableRun(deps, item, fence, live, retentionDays);
  const invoke: DurableContext["invoke"] = (kind, payload, options) =>
    invokeChild(run, kind, payload, options);
  const invokeMany: DurableContext["invokeMany"] = (kind, payloads, options) =>
    invokeManyChildren(run, kind, payloads, options);
  return { context: { ...run.context, invoke, invokeMany }, suspended: run.suspended };
}

export type DurableRunOpener = typeof openDurableRun;
