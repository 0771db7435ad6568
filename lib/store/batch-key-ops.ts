import {
  attributeAtLeast,
  attributeBefore,
  attributeEquals,
  attributeMissing,
  itemMissing,
} from "./conditions.ts";
import { conditionalDelete, conditionalUpdate, orOnConflict, type StoreContext, wonRace } from "./context.ts";
import { or, Update } from "./expression.ts";
import { batchBacklogKey, batchCallPermitKey } from "./keys.ts";
import { stampFormat } from "./stored-formats.ts";

/*
 * A batch kind's per-key items (docs/architecture.md §18), beside the jobs in the same table:
 * - the backlog: how many of the key's jobs are admitted and not yet ended (maxPendingPerKey);
 * - the call permits: one item per call of the key running anywhere in the cluster (maxKeyConcurrency);
 *   stored under `slot#<n>` sort keys (their name before the rename, kept for the data's sake).
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
        update: stampFormat(
          new Update(e).increment("pending", 1).set("expiresAt", expiresAt),
          "batchBacklog",
        ),
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

/** A permit's hold: until when (epoch ms), and a TTL a day later, so a dead call's permit item goes. */
const heldUntil = (u: Update, until: number) =>
  u.set("until", until).set("expiresAt", Math.ceil(until / 1000) + 86_400);

/**
 * takeCallPermit — one call's place among the key's maxKeyConcurrency concurrent calls.
 * input: kind, key, the permit to try (0 to maxKeyConcurrency-1), the call's token, until when it
 *   holds it (epoch ms).
 * condition: the permit is free: never taken, OR its holder's hold has run out.
 * result: true when taken; false when another call holds it.
 */
export function takeCallPermit(
  ctx: StoreContext,
  kind: string,
  key: string,
  permit: number,
  token: string,
  until: number,
): Promise<boolean> {
  const now = ctx.clock.now();
  return wonRace(
    conditionalUpdate(
      ctx,
      "takeCallPermit",
      batchCallPermitKey(kind, key, permit),
      (e) => ({
        update: stampFormat(heldUntil(new Update(e).set("token", token), until), "batchCallPermit"),
        condition: or(itemMissing, attributeBefore("until", now)),
      }),
      { readCurrent: false },
    ),
  );
}

/**
 * holdCallPermit — a running call extends its hold.
 * input: kind, key, permit, token, the new until. condition: the permit is still this call's.
 * result: true when extended; false when it was lost (the hold ran out and another call took it).
 */
export function holdCallPermit(
  ctx: StoreContext,
  kind: string,
  key: string,
  permit: number,
  token: string,
  until: number,
): Promise<boolean> {
  return wonRace(
    conditionalUpdate(
      ctx,
      "holdCallPermit",
      batchCallPermitKey(kind, key, permit),
      (e) => ({
        update: heldUntil(new Update(e), until),
        condition: attributeEquals("token", token),
      }),
      { readCurrent: false },
    ),
  );
}

/**
 * freeCallPermit — a finished call gives its permit back.
 * input: kind, key, permit, token. condition: the permit is still this call's.
 * result: the permit item is deleted; a permit another call took over is left to it.
 */
export async function freeCallPermit(
  ctx: StoreContext,
  kind: string,
  key: string,
  permit: number,
  token: string,
): Promise<void> {
  await wonRace(
    conditionalDelete(
      ctx,
      "freeCallPermit",
      batchCallPermitKey(kind, key, permit),
      attributeEquals("token", token),
      {
        readCurrent: false,
      },
    ),
  );
}
