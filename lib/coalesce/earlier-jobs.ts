import { isTerminal } from "../job/status.ts";
import { errorFields } from "../observability/log.ts";
import { longestRetentionExpiry } from "../retention.ts";
import type { StoreContext } from "../store/context.ts";
import { deleteWaiterOfEnded } from "../store/event-waiter-ops.ts";
import { cancel } from "../store/finalize-ops.ts";
import type { JobItem } from "../store/job-item.ts";
import { getJob } from "../store/read-ops.ts";
import type { CoalesceDeps } from "./coalesce-deps.ts";

/** At most this many jobs of a singleton key are waited for (the message carries them). */
const MAX_AFTER = 20;

/**
 * The jobs of a singleton key that may still run, newest first: the job the lock named and those
 * it waited for, less any that ended (or never got written).
 */
export async function unendedJobs(store: StoreContext, previous: JobItem | undefined): Promise<string[]> {
  if (!previous) return [];
  const candidates = [previous, ...(await jobsOf(store, previous.after ?? []))];
  return candidates
    .filter((job) => !isTerminal(job.status))
    .map((job) => job.id)
    .slice(0, MAX_AFTER);
}

/** Whether any of a singleton job's earlier jobs may still run (one that was never written can't). */
export async function earlierJobRuns(store: StoreContext, ids: readonly string[]): Promise<boolean> {
  const jobs = await Promise.all(ids.map((id) => getJob(store, id)));
  return jobs.some((job) => job !== undefined && !isTerminal(job.status));
}

/**
 * How long a singleton job's delivery waits before it looks again whether the earlier jobs of its
 * key have ended (docs/architecture.md §19): 2 s, doubling with each receive up to a minute. A
 * cancelled run ends within seconds, so cancel-running starts the new job quickly; a long wait
 * behind a running job costs a receive a minute, and each counts toward the queue's
 * maxReceiveCount (120 on `default`: about two hours of waiting before the dead-letter queue).
 */
export function singletonLookSeconds(receiveCount = 1): number {
  return Math.min(60, 2 ** Math.min(6, Math.max(1, receiveCount)));
}

/** cancel-running: each earlier job ends cancelled (queued) or has its run aborted (running). */
export async function cancelEarlierJobs(deps: CoalesceDeps, ids: readonly string[]): Promise<void> {
  const { store, clock, queues, running } = deps;
  const ttl = longestRetentionExpiry(clock.now(), queues);
  for (const id of ids) {
    const result = await cancel(store, id, ttl).catch((err: unknown) => {
      // The new job still waits for it: a cancel lost here only lets the old run finish.
      deps.log.warn("could not cancel an earlier job of a singleton key", { id, ...errorFields(err) });
      return undefined;
    });
    if (result?.outcome === "requested") running?.requestCancel(id);
    // One cancelled while it waited for an event: its pointer goes with the wait (§22).
    if (result?.outcome === "cancelled")
      await deleteWaiterOfEnded(store, result.item).catch((err: unknown) =>
        // A pointer left here resumes nothing: the next event on its pair takes it away.
        deps.log.warn("could not delete a cancelled job's event waiter", { id, ...errorFields(err) }),
      );
  }
}

async function jobsOf(store: StoreContext, ids: readonly string[]): Promise<JobItem[]> {
  const found = await Promise.all(ids.map((id) => getJob(store, id)));
  return found.filter((job): job is JobItem => job !== undefined);
}
