import { isTerminal } from "../job/status.ts";
import { errorFields } from "../observability/log.ts";
import { retentionExpiry } from "../retention.ts";
import { deferGroupCheck, expireGroup } from "../store/group-end-ops.ts";
import { type GroupItem, isSliceComplete, recordedStatus } from "../store/group-item.ts";
import { allSlices, getJobs, queryDueGroups } from "../store/group-read-ops.ts";
import { getJob } from "../store/read-ops.ts";
import { recordChild, voidSlice } from "../store/slice-ops.ts";
import { GROUP_INDEX_SHARDS } from "../store/table.ts";
import {
  GROUP_FOLLOW_UP_MS,
  GROUP_STALL_MAX_MS,
  GROUP_STALL_MS,
  type GroupDeps,
  LOST_CHILD_AFTER_MS,
  SLICE_RETENTION_DAYS,
} from "./group-deps.ts";
import { cancelMembers, finishCancel, recordEnd } from "./group-end.ts";
import { completionEnded, enqueueCompletion, sliceFinished, tryComplete } from "./group-progress.ts";

export interface GroupCheckReport {
  /** Unfinished groups the reaper looked at this run. */
  groupsChecked: number;
  /** Unsealed groups past their expiry, sealed as failed. */
  groupsExpired: number;
  /** Children or slices whose end had not reached their group, recorded now. */
  groupRepairs: number;
}

/**
 * The reaper's look at groups (docs/architecture.md §15). Groups sit in the status index under
 * `~group#<shard>`, sorted by when to look next: an open group at its expiry, a sealed one after
 * GROUP_STALL_MS without a finished slice, a completing or cancelled one shortly after the write that
 * put it there. Nothing here runs while groups make progress: each finished slice moves the look out.
 */
export async function checkGroups(deps: GroupDeps, maxPerShard = 100): Promise<GroupCheckReport> {
  const report: GroupCheckReport = { groupsChecked: 0, groupsExpired: 0, groupRepairs: 0 };
  const now = deps.clock.now();
  for (let shard = 0; shard < GROUP_INDEX_SHARDS; shard++) {
    for (const group of await queryDueGroups(deps.store, shard, now, maxPerShard)) {
      report.groupsChecked++;
      try {
        await checkGroup(deps, group, report);
      } catch (err) {
        deps.log.error("group check failed; the next reaper run tries again", {
          groupId: group.id,
          ...errorFields(err),
        });
      }
    }
  }
  return report;
}

async function checkGroup(deps: GroupDeps, group: GroupItem, report: GroupCheckReport): Promise<void> {
  const now = deps.clock.now();
  switch (group.status) {
    case "open": {
      const expired = await expireGroup(deps.store, group.id, now + GROUP_STALL_MS);
      if (!expired) return;
      report.groupsExpired++;
      deps.log.warn("a group was never sealed; sealed at its expiry, as failed", { groupId: group.id });
      return tryComplete(deps, expired);
    }
    case "sealed": {
      const repaired = await repairSealed(deps, group);
      report.groupRepairs += repaired;
      if (repaired > 0) return;
      const stalls = (group.stalls ?? 0) + 1;
      await deferGroupCheck(
        deps.store,
        group,
        now + Math.min(GROUP_STALL_MS * 2 ** stalls, GROUP_STALL_MAX_MS),
        stalls,
      );
      return;
    }
    case "completing": {
      const job = group.completionJobId ? await getJob(deps.store, group.completionJobId) : undefined;
      if (!job) await enqueueCompletion(deps, group);
      else if (isTerminal(job.status)) await completionEnded(deps, group.id, job.status as "done");
      if (!job || !isTerminal(job.status))
        await deferGroupCheck(deps.store, group, now + GROUP_FOLLOW_UP_MS, 0);
      return;
    }
    case "cancelled":
      return finishCancel(deps, group);
    default:
      return;
  }
}

/**
 * Finds what a crash kept from a sealed group: slices full but not counted, children ended but not
 * recorded, children never enqueued, slices never written. A terminate group that failed gets the
 * rest of its siblings cancelled. result: how many repairs it made.
 */
async function repairSealed(deps: GroupDeps, group: GroupItem): Promise<number> {
  const now = deps.clock.now();
  let repairs = 0;
  if (group.failure === "terminate" && group.failedChild) await cancelMembers(deps, group);
  const seen = new Set<number>();
  for await (const slice of allSlices(deps.store, group)) {
    seen.add(slice.slice);
    if (group.doneSlices?.has(slice.slice)) continue;
    if (isSliceComplete(slice)) {
      await sliceFinished(deps, group.id, slice.slice);
      repairs++;
      continue;
    }
    const open = slice.ids.filter((_, p) => recordedStatus(slice, p) === undefined);
    const jobs = await getJobs(deps.store, open);
    for (const [p, id] of slice.ids.entries()) {
      if (recordedStatus(slice, p) !== undefined) continue;
      const job = jobs.get(id);
      if (job && isTerminal(job.status)) {
        await recordEnd(deps, job);
        repairs++;
      } else if (!job && now - slice.createdAt > LOST_CHILD_AFTER_MS) {
        const lost = await recordChild(deps.store, { g: group.id, s: slice.slice, p }, "dead");
        if (lost.slice && isSliceComplete(lost.slice)) await sliceFinished(deps, group.id, slice.slice);
        repairs++;
      }
    }
  }
  // A slice allocated but never written: its writer died before enqueuing any of its children.
  if ((group.stalls ?? 0) >= 2) {
    for (let s = 0; s < group.slices; s++) {
      if (seen.has(s)) continue;
      if (await voidSlice(deps.store, group, s, retentionExpiry(now, SLICE_RETENTION_DAYS))) {
        await sliceFinished(deps, group.id, s);
        repairs++;
      }
    }
  }
  return repairs;
}
