import type { StoreTransitions } from "../job/status.ts";
import { claimable, leaseHeldBy, statusIs } from "./conditions.ts";
import { conditionalUpdate, orOnConflict, type StoreContext } from "./context.ts";
import { and, Update } from "./expression.ts";
import type { JobItem, JobSeed } from "./job-item.ts";
import { jobKey } from "./keys.ts";

/**
 * Fills in a job's fields from its message, leaving any the item already has: a write that may be
 * the first to see a job (its enqueue died before the item write) builds the item as it goes.
 */
export function seedIfMissing(update: Update, seed: JobSeed): Update {
  update
    .setIfAbsent("id", seed.id)
    .setIfAbsent("kind", seed.kind)
    .setIfAbsent("queue", seed.queue)
    .setIfAbsent("maxAttempts", seed.maxAttempts)
    .setIfAbsent("priority", seed.priority)
    .setIfAbsent("createdAt", seed.createdAt)
    .setIfAbsent("runAt", seed.runAt);
  if (seed.payloadObject) update.setIfAbsent("payloadObject", seed.payloadObject);
  else if (seed.payloadRef) update.set("payloadRef", true);
  else if (seed.payload !== undefined) update.setIfAbsent("payload", seed.payload);
  if (seed.timeoutSeconds !== undefined) update.setIfAbsent("timeoutSeconds", seed.timeoutSeconds);
  if (seed.startBy !== undefined) update.setIfAbsent("startBy", seed.startBy);
  if (seed.uniqueKey !== undefined) update.setIfAbsent("uniqueKey", seed.uniqueKey);
  if (seed.member !== undefined) update.setIfAbsent("member", seed.member);
  if (seed.completes !== undefined) update.setIfAbsent("completes", seed.completes);
  if (seed.batchKey !== undefined) update.setIfAbsent("batchKey", seed.batchKey);
  if (seed.inBacklog) update.setIfAbsent("inBacklog", true);
  if (seed.coalesceKey !== undefined) update.setIfAbsent("coalesceKey", seed.coalesceKey);
  if (seed.after?.length) update.setIfAbsent("after", seed.after);
  if (seed.flowKey !== undefined) update.setIfAbsent("flowKey", seed.flowKey);
  if (seed.replayOf !== undefined) update.setIfAbsent("replayOf", seed.replayOf);
  return update;
}

export type ClaimResult = { claimed: true; item: JobItem } | { claimed: false; current: JobItem | undefined };

/**
 * claim — take ownership of a job for one attempt.
 * input: the seed from the message, a fresh lease token, the lease length.
 * condition: the item is missing (enqueue died between its writes: the message is the outbox), OR it is
 *   queued/scheduled and due, OR it is running under an expired lease (takeover of a dead worker).
 * result: status=running, new token + leaseUntil, attempts+1, claimedFrom = previous status; the new
 *   item is returned. attempts + token form the fence. On a lost race, the current item.
 */
export async function claim(
  ctx: StoreContext,
  seed: JobSeed,
  token: string,
  leaseMs: number,
): Promise<ClaimResult> {
  const now = ctx.clock.now();
  const claiming = conditionalUpdate<JobItem>(ctx, "claim", jobKey(seed.id), (e) => {
    const update = new Update(e)
      .copy("claimedFrom", "status", "missing")
      .set("status", "running")
      .set("leaseToken", token)
      .set("leaseUntil", now + leaseMs)
      .set("startedAt", now)
      .increment("attempts", 1)
      // A parked job leaves its key's waiting line (the index) as it starts.
      // A durable job's wait is over once it runs again (docs/architecture.md §22).
      .remove("gsi1pk", "gsi1sk", "promotingUntil", "parked", "waiting");
    seedIfMissing(update, seed);
    return { update, condition: claimable(now) };
  });
  return orOnConflict(
    claiming.then((item): ClaimResult => ({ claimed: true, item })),
    (current: JobItem | undefined): ClaimResult => ({ claimed: false, current }),
  );
}

export const claimTransitions = [
  ["missing", "running"],
  ["queued", "running"],
  ["scheduled", "running"],
  ["running", "running"],
] as const satisfies StoreTransitions;

export type HeartbeatResult = { held: true; cancelRequested: boolean; leaseUntil: number } | { held: false };

/**
 * heartbeat — renew the lease and learn whether a cancel was requested.
 * input: job id, the fence token, the lease length.
 * condition: still running under this token.
 * result: { held, cancelRequested } or { held: false } when the lease was lost to a takeover or the
 *   job left running.
 */
export async function heartbeat(
  ctx: StoreContext,
  id: string,
  token: string,
  leaseMs: number,
): Promise<HeartbeatResult> {
  const leaseUntil = ctx.clock.now() + leaseMs;
  const renewal = conditionalUpdate<JobItem>(
    ctx,
    "heartbeat",
    jobKey(id),
    (e) => ({
      update: new Update(e).set("leaseUntil", leaseUntil),
      condition: and(statusIs("running"), leaseHeldBy(token)),
    }),
    { readCurrent: false },
  );
  return orOnConflict(
    renewal.then(
      (item): HeartbeatResult => ({ held: true, cancelRequested: item.cancelRequested === true, leaseUntil }),
    ),
    (): HeartbeatResult => ({ held: false }),
  );
}

export const heartbeatTransitions = [] as const satisfies StoreTransitions;
