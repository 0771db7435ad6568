import type { TerminalStatus } from "../job/status.ts";
import { itemExists, itemMissing, not, setContains } from "./conditions.ts";
import { conditionalPut, conditionalUpdate, orOnConflict, type StoreContext, wonRace } from "./context.ts";
import { and, Update } from "./expression.ts";
import { type GroupItem, type Member, recordedStatuses, type SliceItem } from "./group-item.ts";
import { sliceKey } from "./keys.ts";
import { formatStamp } from "./stored-formats.ts";

/** Writes of a group's slices (docs/architecture.md §15): the record of which child ended how. */

/**
 * putSlice — a slice's children, written before any of them is enqueued.
 * input: the slice. condition: no slice with this number (a retried create writes it once; a slice
 *   the reaper voided stays void). result: true when written.
 */
export function putSlice(ctx: StoreContext, slice: SliceItem): Promise<boolean> {
  return wonRace(
    conditionalPut(
      ctx,
      "putSlice",
      { ...slice, ...formatStamp("groupSlice") } as SliceItem & Record<string, unknown>,
      itemMissing,
      { readCurrent: false },
    ),
  );
}

/**
 * voidSlice — a slice allocated long ago whose writer never wrote it (it crashed before enqueuing
 * any of its children) is written empty, so the group can complete.
 * condition: no slice with this number. result: true when this call voided it.
 */
export function voidSlice(
  ctx: StoreContext,
  group: Pick<GroupItem, "id" | "slicePartitions">,
  slice: number,
  expiresAt: number,
): Promise<boolean> {
  const groupId = group.id;
  const item: SliceItem = {
    ...sliceKey(groupId, slice, group.slicePartitions),
    groupId,
    slice,
    ids: [],
    createdAt: ctx.clock.now(),
    void: true,
    expiresAt,
  };
  return putSlice(ctx, item);
}

export type RecordResult = { recorded: boolean; slice: SliceItem | undefined };

/**
 * recordChild — counts a child's terminal status in its slice, once.
 * input: the child's membership and status.
 * condition: the slice exists and the position is in none of its sets.
 * result: { recorded: true, slice after }, or { recorded: false, slice as it is } when it was
 *   recorded before (a duplicate delivery, a retried write, the reaper's repair): the caller goes on
 *   from the slice either way, so a crash after this write is repaired by whoever records next.
 */
export async function recordChild(
  ctx: StoreContext,
  member: Member,
  status: TerminalStatus,
): Promise<RecordResult> {
  const write = conditionalUpdate<SliceItem>(
    ctx,
    "recordChild",
    sliceKey(member.g, member.s, member.n),
    (e) => ({
      update: new Update(e).addToSet(status, new Set([member.p])),
      condition: and(itemExists, ...recordedStatuses.map((s) => not(setContains(s, member.p)))),
    }),
  );
  return orOnConflict(
    write.then((slice): RecordResult => ({ recorded: true, slice })),
    (current: SliceItem | undefined): RecordResult => ({ recorded: false, slice: current }),
  );
}
