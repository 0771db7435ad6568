import type { GroupTransition } from "../job/group-status.ts";
import { attributeAtMost, attributeExists, groupStatusIn } from "./conditions.ts";
import { conditionalUpdate, orOnConflict, type StoreContext, wonRace } from "./context.ts";
import { and, Update } from "./expression.ts";
import type { GroupItem } from "./group-item.ts";
import { groupMissing } from "./group-ops.ts";
import { groupIndexKeys, groupKey } from "./keys.ts";

/**
 * The group writes of its end and of the reaper's look (docs/architecture.md §15): expiry, cancel,
 * the end of a cancel's cascade, and the next look. The writes of its progress are in group-ops.ts.
 */

/**
 * expireGroup — an unsealed group past its sealBy seals itself, marked expired (its outcome: failed).
 * condition: open and sealBy ≤ now. result: the item, or undefined when it moved first.
 */
export async function expireGroup(
  ctx: StoreContext,
  id: string,
  checkAt: number,
): Promise<GroupItem | undefined> {
  const now = ctx.clock.now();
  const write = conditionalUpdate<GroupItem>(
    ctx,
    "expireGroup",
    groupKey(id),
    (e) => ({
      update: new Update(e)
        .set("status", "sealed")
        .set("sealedAt", now)
        .set("expired", true)
        .setAll(groupIndexKeys(id, checkAt)),
      condition: and(groupStatusIn("open"), attributeAtMost("sealBy", now)),
    }),
    { readCurrent: false },
  );
  return orOnConflict(write, () => undefined);
}
export const expireGroupTransitions = [["open", "sealed"]] as const satisfies readonly GroupTransition[];

/**
 * cancelGroup — a user's cancel. The group stays in the index (due at `checkAt`) until its cascade
 * has run to the end, so a cascade cut short by a crash is finished by the reaper.
 * condition: not finished. result: { cancelled: true, item } or { cancelled: false, current }.
 *   ItemNotFound.
 */
export async function cancelGroup(
  ctx: StoreContext,
  id: string,
  checkAt: number,
): Promise<CancelGroupResult> {
  const write = conditionalUpdate<GroupItem>(ctx, "cancelGroup", groupKey(id), (e) => ({
    update: new Update(e)
      .set("status", "cancelled")
      .set("finishedAt", ctx.clock.now())
      .setAll(groupIndexKeys(id, checkAt)),
    condition: groupStatusIn("open", "sealed", "completing"),
  }));
  return orOnConflict(
    write.then((item): CancelGroupResult => ({ cancelled: true, item })),
    (current: GroupItem | undefined): CancelGroupResult => {
      if (!current) throw groupMissing(id);
      return { cancelled: false, current };
    },
  );
}
export type CancelGroupResult = { cancelled: boolean; item?: GroupItem; current?: GroupItem };
export const cancelGroupTransitions = [
  ["open", "cancelled"],
  ["sealed", "cancelled"],
  ["completing", "cancelled"],
] as const satisfies readonly GroupTransition[];

/**
 * settleGroup — a finished group's follow-up work is over (a cancel's cascade ran): out of the index,
 * TTL set. condition: finished as cancelled. result: true when this call moved it.
 */
export async function settleCancelledGroup(
  ctx: StoreContext,
  id: string,
  expiresAt: number,
): Promise<boolean> {
  return wonRace(
    conditionalUpdate(
      ctx,
      "settleCancelledGroup",
      groupKey(id),
      (e) => ({
        update: new Update(e).set("expiresAt", expiresAt).remove("gsi1pk", "gsi1sk", "stalls"),
        condition: and(groupStatusIn("cancelled"), attributeExists("gsi1pk")),
      }),
      { readCurrent: false },
    ),
  );
}

/**
 * deferGroupCheck — the reaper looked and found nothing to do yet: look again at `checkAt`.
 * condition: still indexed and in the status the reaper read. result: true when moved.
 */
export async function deferGroupCheck(
  ctx: StoreContext,
  group: Pick<GroupItem, "id" | "status">,
  checkAt: number,
  stalls: number,
): Promise<boolean> {
  return wonRace(
    conditionalUpdate(
      ctx,
      "deferGroupCheck",
      groupKey(group.id),
      (e) => ({
        update: new Update(e).set("gsi1sk", groupIndexKeys(group.id, checkAt).gsi1sk).set("stalls", stalls),
        condition: and(groupStatusIn(group.status), attributeExists("gsi1pk")),
      }),
      { readCurrent: false },
    ),
  );
}
