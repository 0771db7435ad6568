import {
  attributeAtLeast,
  attributeBefore,
  attributeEquals,
  attributeMissing,
  itemMissing,
} from "./conditions.ts";
import { conditionalDelete, conditionalUpdate, orOnConflict, type StoreContext, wonRace } from "./context.ts";
import { or, Update } from "./expression.ts";
import { batchBacklogKey, batchSlotKey } from "./keys.ts";

/*
 * A batch kind's per-key items (docs/architecture.md §18), beside the jobs in the same table:
 * - the backlog: how many of the key's jobs are admitted and not yet ended (maxPendingPerKey);
 * - the slots: one item per call of the key running anywhere in the cluster (maxKeyConcurrency).
 */

/**
 * admitToBacklog — counts one more waiting job for the key, unless it already has `max`.
 * input: kind, key, max, the TTL (the count outlives its jobs' retention, then goes).
 * condition: no count yet, OR count < max.
 * result: true when admitted; false when the key is full (nothing written).
 */
export function admitToBacklog(
  ctx: StoreContext,
  kind: string,
  key: string,
  max: number,
  expiresAt: number,
): Promise<boolean> {
  return wonRace(
    conditionalUpdate(
      ctx,
      "admitToBacklog",
      batchBacklogKey(kind, key),
      (e) => ({
        update: new Update(e).increment("pending", 1).set("expiresAt", expiresAt),
        condition: or(attributeMissing("pending"), attributeBefore("pending", max)),
      }),
      { readCurrent: false },
    ),
  );
}

/**
 * leaveBacklog — counts `n` of the key's jobs as ended (one write per call, whatever its size).
 * input: kind, key, n ≥ 1.
 * condition: the count is at least n (a count never goes below zero).
 * result: the count is lowered by n; when it is lower than n (a lost admission), it is set to 0.
 */
export async function leaveBacklog(ctx: StoreContext, kind: string, key: string, n: number): Promise<void> {
  const lowered = await wonRace(
    conditionalUpdate(
      ctx,
      "leaveBacklog",
      batchBacklogKey(kind, key),
      (e) => ({ update: new Update(e).increment("pending", -n), condition: attributeAtLeast("pending", n) }),
      { readCurrent: false },
    ),
  );
  if (lowered) return;
  await orOnConflict(
    conditionalUpdate(
      ctx,
      "leaveBacklog:floor",
      batchBacklogKey(kind, key),
      (e) => ({ update: new Update(e).set("pending", 0), condition: attributeBefore("pending", n) }),
      { readCurrent: false },
    ),
    () => undefined,
  );
}

/** A slot's hold: until when (epoch ms), and a TTL a day later, so a dead call's slot item goes. */
const heldUntil = (u: Update, until: number) =>
  u.set("until", until).set("expiresAt", Math.ceil(until / 1000) + 86_400);

/**
 * takeKeySlot — one call's place among the key's `slots` concurrent calls.
 * input: kind, key, the slot to try, the call's token, until when it holds it (epoch ms).
 * condition: the slot is free: never taken, OR its holder's hold has run out.
 * result: true when taken; false when another call holds it.
 */
export function takeKeySlot(
  ctx: StoreContext,
  kind: string,
  key: string,
  slot: number,
  token: string,
  until: number,
): Promise<boolean> {
  const now = ctx.clock.now();
  return wonRace(
    conditionalUpdate(
      ctx,
      "takeKeySlot",
      batchSlotKey(kind, key, slot),
      (e) => ({
        update: heldUntil(new Update(e).set("token", token), until),
        condition: or(itemMissing, attributeBefore("until", now)),
      }),
      { readCurrent: false },
    ),
  );
}

/**
 * holdKeySlot — a running call extends its hold.
 * input: kind, key, slot, token, the new until. condition: the slot is still this call's.
 * result: true when extended; false when it was lost (the hold ran out and another call took it).
 */
export function holdKeySlot(
  ctx: StoreContext,
  kind: string,
  key: string,
  slot: number,
  token: string,
  until: number,
): Promise<boolean> {
  return wonRace(
    conditionalUpdate(
      ctx,
      "holdKeySlot",
      batchSlotKey(kind, key, slot),
      (e) => ({
        update: heldUntil(new Update(e), until),
        condition: attributeEquals("token", token),
      }),
      { readCurrent: false },
    ),
  );
}

/**
 * freeKeySlot — a finished call gives its slot back.
 * input: kind, key, slot, token. condition: the slot is still this call's.
 * result: the slot item is deleted; a slot another call took over is left to it.
 */
export async function freeKeySlot(
  ctx: StoreContext,
  kind: string,
  key: string,
  slot: number,
  token: string,
): Promise<void> {
  await wonRace(
    conditionalDelete(ctx, "freeKeySlot", batchSlotKey(kind, key, slot), attributeEquals("token", token), {
      readCurrent: false,
    }),
  );
}
