import pLimit from "p-limit";
import { isTerminal, type TerminalStatus } from "../job/status.ts";
import { longestRetentionExpiry } from "../retention.ts";
import { deleteWaiterOfEnded } from "../store/event-waiter-ops.ts";
import { cancel } from "../store/finalize-ops.ts";
import { cancelGroup, settleCancelledGroup } from "../store/group-end-ops.ts";
import { type GroupItem, recordedStatus } from "../store/group-item.ts";
import { failGroup } from "../store/group-ops.ts";
import { allSlices, getGroup, getJobs } from "../store/group-read-ops.ts";
import type { JobItem } from "../store/job-item.ts";
import { getJob } from "../store/read-ops.ts";
import { GROUP_FOLLOW_UP_MS, type GroupDeps } from "./group-deps.ts";
import { completionEnded, recordMember } from "./group-progress.ts";

/**
 * What a job's end means to the groups around it (docs/architecture.md §15). Called by whoever saw
 * the job become terminal: the worker after its finalize, a duplicate delivery that found it
 * finished, the DLQ drain, a cancel. Idempotent, so each of them may call it again.
 */
export async function recordEnd(deps: GroupDeps, job: JobItem): Promise<void> {
  if (!isTerminal(job.status)) return;
  const status = job.status as TerminalStatus;
  if (job.completes) await completionEnded(deps, job.completes, status);
  // A job that handed its membership to a group it created is recorded by that group's end instead.
  if (!job.member || (status === "done" && job.handoff)) return;
  await recordMember(deps, job.member, status, job);
  if (status === "dead") await terminateOnDeath(deps, job);
}

/** A dead child of a terminate group fails it (the first one only) and cancels its siblings. */
async function terminateOnDeath(deps: GroupDeps, job: JobItem): Promise<void> {
  if (!job.member) return;
  const group = await getGroup(deps.store, job.member.g);
  if (group?.failure !== "terminate") return;
  const failed = await failGroup(deps.store, group.id, { id: job.id, error: job.lastError ?? "dead" });
  if (failed) await cancelMembers(deps, failed);
}

const limit = pLimit(16);

/**
 * Cancels every child of the group that has not ended, and the groups below them: a queued or
 * scheduled child at once (and recorded), a running one through its signal (its own finalize records
 * it). A child found ended but not recorded is recorded (the repair of a crash after its finalize).
 */
export async function cancelMembers(deps: GroupDeps, group: GroupItem): Promise<void> {
  const ttl = longestRetentionExpiry(deps.clock.now(), deps.queues);
  for await (const slice of allSlices(deps.store, group)) {
    const jobs = await getJobs(deps.store, slice.ids);
    await Promise.all(
      slice.ids.map((id, p) =>
        limit(async () => {
          const job = jobs.get(id);
          if (!job) return;
          await cascade(deps, job);
          if (recordedStatus(slice, p) !== undefined) return;
          await cancelChild(deps, job, ttl);
        }),
      ),
    );
  }
}

async function cancelChild(deps: GroupDeps, job: JobItem, ttl: number): Promise<void> {
  if (isTerminal(job.status)) return recordEnd(deps, job);
  try {
    const { outcome, item } = await cancel(deps.store, job.id, ttl);
    if (outcome === "requested") deps.running?.requestCancel(job.id);
    else {
      // A child cancelled while it waited for an event: its pointer goes with the wait (§22).
      if (outcome === "cancelled") await deleteWaiterOfEnded(deps.store, item);
      await recordEnd(deps, item);
    }
  } catch (err) {
    // It ended between the read and the cancel: record how.
    const now = await getJob(deps.store, job.id);
    if (now && isTerminal(now.status)) return recordEnd(deps, now);
    throw err;
  }
}

/** The groups a child's handler created are below this group: a cancel reaches them too. */
async function cascade(deps: GroupDeps, job: JobItem): Promise<void> {
  for (const id of job.childGroups ?? []) await cancelGroupTree(deps, id);
}

/**
 * Cancels a group and everything below it: its children, their groups, its completion job. A group
 * already finished is left as it is. result: the group after, or undefined when there is none.
 */
export async function cancelGroupTree(deps: GroupDeps, id: string): Promise<GroupItem | undefined> {
  const result = await cancelGroup(deps.store, id, deps.clock.now() + GROUP_FOLLOW_UP_MS);
  const group = result.item ?? result.current;
  if (group?.status !== "cancelled" || group.gsi1pk === undefined) return group;
  await finishCancel(deps, group);
  return (await getGroup(deps.store, id)) ?? group;
}

/** The rest of a cancel, run by the canceller and again by the reaper until it got to the end. */
export async function finishCancel(deps: GroupDeps, group: GroupItem): Promise<void> {
  const ttl = longestRetentionExpiry(deps.clock.now(), deps.queues);
  await cancelMembers(deps, group);
  const completion = group.completionJobId ? await getJob(deps.store, group.completionJobId) : undefined;
  if (completion) {
    // Its end records the membership this group took over, if any.
    await cascade(deps, completion);
    await cancelChild(deps, completion, ttl);
  } else if (group.member) {
    // A membership this group took over from the job that created it ends with the group, as cancelled.
    const { kind } = group.onComplete;
    await recordMember(deps, group.member, "cancelled", {
      id: group.parentJobId ?? group.id,
      queue: group.onComplete.queue ?? deps.registry.get(kind)?.queue ?? "unknown",
      kind,
    });
  }
  await settleCancelledGroup(deps.store, group.id, ttl);
}
