import { InvalidItemState, ItemNotFound } from "../errors.ts";
import type { GroupTransition } from "../job/group-status.ts";
import { attributeEquals, attributeMissing, groupStatusIn, itemExists, itemMissing } from "./conditions.ts";
import { conditionalPut, conditionalUpdate, orOnConflict, type StoreContext, wonRace } from "./context.ts";
import { and, type Condition, Update } from "./expression.ts";
import type { GroupItem } from "./group-item.ts";
import { groupIndexKeys, groupKey } from "./keys.ts";
import { formatStamp } from "./stored-formats.ts";

/** Writes of the group item (docs/architecture.md §15). Each is one conditional UpdateItem or PutItem. */

export const groupMissing = (id: string) => new ItemNotFound(`group ${id} not found`);

/**
 * putGroup — creates a group with its first slices already allocated.
 * input: the whole item (open or sealed, in the index until its first check).
 * condition: no group with this id.
 * result: { created: true } or { created: false, current } (a retried create, or an id in use).
 */
export async function putGroup(ctx: StoreContext, item: GroupItem): Promise<PutGroupResult> {
  return orOnConflict(
    conditionalPut(
      ctx,
      "putGroup",
      { ...item, ...formatStamp("group") } as GroupItem & Record<string, unknown>,
      itemMissing,
    ).then((): PutGroupResult => ({ created: true })),
    (current: GroupItem | undefined): PutGroupResult => {
      if (!current) throw groupMissing(item.id);
      return { created: false, current };
    },
  );
}
export type PutGroupResult = { created: true } | { created: false; current: GroupItem };
export const putGroupTransitions = [
  ["missing", "open"],
  ["missing", "sealed"],
] as const satisfies readonly GroupTransition[];

/**
 * allocateSlices — room for more children in an open group.
 * input: group id, slices and children to add. condition: open.
 * result: the item after; its last `slices` slice numbers are the caller's. InvalidItemState once
 *   sealed (a 409), ItemNotFound.
 */
export async function allocateSlices(
  ctx: StoreContext,
  id: string,
  slices: number,
  children: number,
): Promise<GroupItem> {
  const write = conditionalUpdate<GroupItem>(ctx, "allocateSlices", groupKey(id), (e) => ({
    update: new Update(e).increment("slices", slices).increment("size", children),
    condition: groupStatusIn("open"),
  }));
  return orOnConflict(write, (current: GroupItem | undefined) => {
    if (!current) throw groupMissing(id);
    throw new InvalidItemState(`group ${id} is ${current.status}: no more children can be added`, current);
  });
}

/**
 * sealGroup — no more children; the group completes once every child is terminal.
 * input: id, when to look at it next. condition: open.
 * result: the sealed item; a group already past open comes back as it is (sealing is idempotent).
 *   ItemNotFound.
 */
export async function sealGroup(ctx: StoreContext, id: string, checkAt: number): Promise<GroupItem> {
  const now = ctx.clock.now();
  const write = conditionalUpdate<GroupItem>(ctx, "sealGroup", groupKey(id), (e) => ({
    update: new Update(e).set("status", "sealed").set("sealedAt", now).setAll(groupIndexKeys(id, checkAt)),
    condition: groupStatusIn("open"),
  }));
  return orOnConflict(write, (current: GroupItem | undefined) => {
    if (!current) throw groupMissing(id);
    return current;
  });
}
export const sealGroupTransitions = [["open", "sealed"]] as const satisfies readonly GroupTransition[];

/**
 * markSliceDone — a slice whose every child is recorded counts toward completion.
 * input: group id, slice number, the next look. condition: the group exists.
 * result: the item after. ADD to the doneSlices set, so a retry or a second recorder changes nothing.
 */
export async function markSliceDone(
  ctx: StoreContext,
  id: string,
  slice: number,
  checkAt: number,
): Promise<GroupItem> {
  const write = conditionalUpdate<GroupItem>(ctx, "markSliceDone", groupKey(id), (e) => ({
    // The next stall check moves out with every slice that finishes (a no-op key on finished groups,
    // which carry no gsi1pk and so stay out of the index).
    update: new Update(e)
      .addToSet("doneSlices", new Set([slice]))
      .set("gsi1sk", groupIndexKeys(id, checkAt).gsi1sk)
      .remove("stalls"),
    condition: itemExists,
  }));
  return orOnConflict(write, () => {
    throw groupMissing(id);
  });
}

/**
 * failGroup — the first child of a terminate group to end dead fails the group and seals it.
 * input: id, the child and its error. condition: open or sealed, no failed child yet.
 * result: the item when this call won (the caller then cancels the siblings); undefined otherwise.
 */
export async function failGroup(
  ctx: StoreContext,
  id: string,
  child: { id: string; error: string },
): Promise<GroupItem | undefined> {
  const now = ctx.clock.now();
  const write = conditionalUpdate<GroupItem>(
    ctx,
    "failGroup",
    groupKey(id),
    (e) => ({
      update: new Update(e)
        .set("status", "sealed")
        .setIfAbsent("sealedAt", now)
        .set("failedChild", { id: child.id, error: child.error.slice(0, 500) }),
      condition: and(groupStatusIn("open", "sealed"), attributeMissing("failedChild")),
    }),
    { readCurrent: false },
  );
  return orOnConflict(write, () => undefined);
}
export const failGroupTransitions = [["open", "sealed"]] as const satisfies readonly GroupTransition[];

/** The sealed group's every slice is done: what completion needs to check and to write. */
export interface CompletionPlan {
  slices: number;
  completionJobId: string;
  outcome: "succeeded" | "failed";
  counts: { done: number; dead: number; cancelled: number };
  checkAt: number;
}

/**
 * beginCompletion — the one write that makes a group's completion job due. Exactly one caller wins
 * it, however many children finish at once: only the winner enqueues the completion job.
 * input: the plan. condition: sealed, `slices` as planned, and every one of them in doneSlices.
 * result: the item in `completing`, or undefined when it was not (yet) complete or another won.
 */
export async function beginCompletion(
  ctx: StoreContext,
  id: string,
  plan: CompletionPlan,
): Promise<GroupItem | undefined> {
  const allDone: Condition =
    plan.slices === 0
      ? attributeMissing("doneSlices")
      : (e) => `size(${e.name("doneSlices")}) = ${e.value(plan.slices)}`;
  const write = conditionalUpdate<GroupItem>(
    ctx,
    "beginCompletion",
    groupKey(id),
    (e) => ({
      update: new Update(e)
        .set("status", "completing")
        .set("completionJobId", plan.completionJobId)
        .set("outcome", plan.outcome)
        .set("counts", plan.counts)
        .setAll(groupIndexKeys(id, plan.checkAt)),
      condition: and(groupStatusIn("sealed"), attributeEquals("slices", plan.slices), allDone),
    }),
    { readCurrent: false },
  );
  return orOnConflict(write, () => undefined);
}
export const beginCompletionTransitions = [
  ["sealed", "completing"],
] as const satisfies readonly GroupTransition[];

/**
 * finishGroup — the completion job ended: the group takes its final status and leaves the index.
 * input: id, the status (succeeded when the job is done and the outcome was, failed otherwise), TTL.
 * condition: completing. result: true when this call moved it.
 */
export async function finishGroup(
  ctx: StoreContext,
  id: string,
  status: "succeeded" | "failed",
  expiresAt: number,
): Promise<boolean> {
  return wonRace(
    conditionalUpdate(
      ctx,
      "finishGroup",
      groupKey(id),
      (e) => ({
        update: new Update(e)
          .set("status", status)
          .set("finishedAt", ctx.clock.now())
          .set("expiresAt", expiresAt)
          .remove("gsi1pk", "gsi1sk", "stalls"),
        condition: groupStatusIn("completing"),
      }),
      { readCurrent: false },
    ),
  );
}
export const finishGroupTransitions = [
  ["completing", "succeeded"],
  ["completing", "failed"],
] as const satisfies readonly GroupTransition[];
