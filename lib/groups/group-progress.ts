import { ClientError } from "../errors.ts";
import type { TerminalStatus } from "../job/status.ts";
import { errorFields } from "../observability/log.ts";
import { longestRetentionExpiry } from "../retention.ts";
import {
  type GroupItem,
  isSliceComplete,
  type Member,
  type SliceItem,
  sliceCounts,
} from "../store/group-item.ts";
import { beginCompletion, finishGroup, markSliceDone } from "../store/group-ops.ts";
import { getGroup } from "../store/group-read-ops.ts";
import { recordChild } from "../store/slice-ops.ts";
import { GROUP_FOLLOW_UP_MS, GROUP_STALL_MS, type GroupDeps } from "./group-deps.ts";
import { countChildren } from "./group-view.ts";

/**
 * How a group moves forward as its children end (docs/architecture.md §15). Every step is idempotent
 * and starts from what the store says now, so any caller (the worker that ended the child, a
 * duplicate delivery, the reaper's repair) can run it again after a crash anywhere in it.
 */

/**
 * Records one child's end in its slice, then, when that completes the slice, the slice in the group,
 * then tries the completion. result: the slice as it is, and whether this call recorded the child.
 */
export async function recordMember(
  deps: GroupDeps,
  member: Member,
  status: TerminalStatus,
  job: { id: string; queue: string; kind: string },
): Promise<{ recorded: boolean; slice: SliceItem | undefined }> {
  const outcome = await recordChild(deps.store, member, status);
  if (outcome.recorded) deps.metrics.count("groupChildRecorded", job.queue, job.kind);
  // The group's progress: the slice's counts as the record's write returned them (no read).
  if (outcome.recorded && outcome.slice)
    deps.realtime?.groupProgress(member.g, job, { slice: member.s, counts: sliceCounts(outcome.slice) });
  if (outcome.slice && isSliceComplete(outcome.slice)) await sliceFinished(deps, member.g, member.s);
  return outcome;
}

/** A slice has every child recorded: count it in the group, and complete the group if it was the last. */
export async function sliceFinished(deps: GroupDeps, groupId: string, slice: number): Promise<void> {
  const group = await markSliceDone(deps.store, groupId, slice, deps.clock.now() + GROUP_STALL_MS);
  await tryComplete(deps, group);
}

export function allSlicesDone(group: GroupItem): boolean {
  return (group.doneSlices?.size ?? 0) >= group.slices;
}

/**
 * When the group is sealed and every slice is done: the one conditional write that starts the
 * completion (only one caller wins it), then the completion job's enqueue.
 */
export async function tryComplete(deps: GroupDeps, group: GroupItem): Promise<void> {
  if (group.status !== "sealed" || !allSlicesDone(group)) return;
  const counts = await countChildren(deps.store, group);
  const failed = counts.dead > 0 || group.failedChild !== undefined || group.expired === true;
  const won = await beginCompletion(deps.store, group.id, {
    slices: group.slices,
    completionJobId: group.completionJobId ?? "",
    outcome: failed ? "failed" : "succeeded",
    counts: { done: counts.done, dead: counts.dead, cancelled: counts.cancelled },
    checkAt: deps.clock.now() + GROUP_FOLLOW_UP_MS,
  });
  if (won) await enqueueCompletion(deps, won);
}

/**
 * Enqueues the completion job under its fixed id. Safe to repeat (the reaper does, when the group
 * stays completing): the job's item write is conditional on its absence, and a second message for
 * the same job is a duplicate delivery, which the claim's fence drops.
 */
export async function enqueueCompletion(deps: GroupDeps, group: GroupItem): Promise<void> {
  const { kind, payload, queue } = group.onComplete;
  try {
    await deps.producer.enqueue(
      { kind, payload: JSON.parse(payload), ...(queue ? { queue } : {}) },
      {
        job: {
          id: group.completionJobId ?? "",
          completes: group.id,
          ...(group.member ? { member: group.member } : {}),
          ...(group.trace ? { trace: group.trace } : {}),
        },
      },
    );
  } catch (err) {
    if (!(err instanceof ClientError)) throw err;
    // The app changed under the group (its completion kind is gone): it can never complete.
    deps.log.error("a group's completion job was refused; the group fails", {
      groupId: group.id,
      ...errorFields(err),
    });
    await endGroup(deps, group, "failed");
  }
}

/** The completion job ended: the group takes its final status, and a handed-over membership is recorded. */
export async function endGroup(
  deps: GroupDeps,
  group: GroupItem,
  status: "succeeded" | "failed",
): Promise<void> {
  const expiresAt = longestRetentionExpiry(deps.clock.now(), deps.queues);
  if (await finishGroup(deps.store, group.id, status, expiresAt)) {
    const { kind, queue } = group.onComplete;
    deps.metrics.count("groupFinished", queue ?? deps.registry.get(kind)?.queue ?? "unknown", kind);
  }
}

/** Called when a completion job reached a terminal status. */
export async function completionEnded(
  deps: GroupDeps,
  groupId: string,
  jobStatus: TerminalStatus,
): Promise<void> {
  const group = await getGroup(deps.store, groupId);
  if (group?.status !== "completing") return;
  await endGroup(deps, group, jobStatus === "done" && group.outcome === "succeeded" ? "succeeded" : "failed");
}
