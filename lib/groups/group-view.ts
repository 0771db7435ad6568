import type { GroupCounts, GroupView } from "../job/group-schemas.ts";
import type { StoreContext } from "../store/context.ts";
import { type GroupItem, sliceCounts } from "../store/group-item.ts";
import { allSlices, type SliceLayout } from "../store/group-read-ops.ts";

/**
 * Children per status, from the slices (page by page: lib/store/group-read-ops.ts listSlices). The
 * total is what the slices hold: a slice the reaper voided held nobody.
 */
export async function countChildren(store: StoreContext, group: SliceLayout): Promise<GroupCounts> {
  const counts: GroupCounts = { total: 0, pending: 0, done: 0, dead: 0, cancelled: 0 };
  for await (const slice of allSlices(store, group)) {
    const of = sliceCounts(slice);
    for (const key of Object.keys(counts) as (keyof GroupCounts)[]) counts[key] += of[key];
  }
  return counts;
}

const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

export function toGroupView(group: GroupItem, counts: GroupCounts): GroupView {
  const view: GroupView = {
    id: group.id,
    status: group.status,
    failure: group.failure,
    counts,
    onComplete: {
      kind: group.onComplete.kind,
      ...(group.onComplete.queue ? { queue: group.onComplete.queue } : {}),
    },
    createdAt: new Date(group.createdAt).toISOString(),
  };
  if (group.completionJobId) view.completionJobId = group.completionJobId;
  if (group.failedChild) view.failedChild = group.failedChild;
  if (group.expired) view.expired = true;
  if (group.parentJobId) view.parentJobId = group.parentJobId;
  const sealedAt = iso(group.sealedAt);
  if (sealedAt) view.sealedAt = sealedAt;
  if (group.status === "open") view.expiresAt = new Date(group.sealBy).toISOString();
  const finishedAt = iso(group.finishedAt);
  if (finishedAt) view.finishedAt = finishedAt;
  return view;
}
