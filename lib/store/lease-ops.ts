import type { StoreTransitions } from "../job/status.ts";
import { lapsedRun, withRecord } from "./attempt-history.ts";
import { lapsedRunOf, leaseHeldBy, startable, statusIs } from "./conditions.ts";
import { conditionalUpdate, orOnConflict, type StoreContext } from "./context.ts";
import { and, Update } from "./expression.ts";
import { seedFields } from "./job-field-copies.ts";
import type { JobItem, JobSeed } from "./job-item.ts";
import { jobKey } from "./keys.ts";
import { stampFormat } from "./stored-formats.ts";

/**
 * Fills in a job's fields from its message (those the map of a job's fields seeds:
 * lib/store/job-fields.ts), leaving any the item already has: a write that may be the first to see
 * a job (its enqueue died before the item write) builds the item as it goes.
 */
export function seedIfMissing(update: Update, seed: JobSeed): Update {
  stampFormat(update, "job");
  for (const [name, value] of Object.entries(seedFields(seed))) update.setIfAbsent(name, value);
  return update;
}

export type ClaimResult = { claimed: true; item: JobItem } | { claimed: false; current: JobItem | undefined };

/** Who takes the run (recorded on the item for its history) and when its platform stops it, if ever. */
export interface RunStamp {
  runner?: string;
  /** Epoch ms: the run's process is stopped then (a Lambda's timeout). */
  deadline?: number;
}

/**
 * claim — take ownership of a job for one attempt.
 * input: the seed from the message, a fresh lease token, the lease length, who runs it.
 * condition: the item is missing (enqueue died between its writes: the message is the outbox), OR it is
 *   queued/scheduled and due; failing that, a second write: it is running under the expired lease of
 *   the token the first write's answer showed (takeover of a dead worker).
 * result: status=running, new token + leaseUntil, attempts+1, startedAt, runner, claimedFrom = previous
 *   status; a takeover also appends the lapsed run's record to the history (why it ended, as far as
 *   known: lib/store/attempt-history.ts). The new item is returned; on a lost race, the current item.
 *   The second write is paid only by takeovers, which are rare; the first claim of a job costs one.
 */
export async function claim(
  ctx: StoreContext,
  seed: JobSeed,
  token: string,
  leaseMs: number,
  run: RunStamp = {},
): Promise<ClaimResult> {
  const now = ctx.clock.now();
  const claiming = conditionalUpdate<JobItem>(ctx, "claim", jobKey(seed.id), (e) => {
    const update = seedIfMissing(
      runUpdate(new Update(e), token, now, leaseMs, run).copy("claimedFrom", "status", "missing"),
      seed,
    );
    return { update, condition: startable(now) };
  });
  return orOnConflict(
    claiming.then((item): ClaimResult => ({ claimed: true, item })),
    (current: JobItem | undefined): Promise<ClaimResult> | ClaimResult =>
      current?.status === "running" && current.leaseToken && (current.leaseUntil ?? now) < now
        ? takeOver(ctx, current, token, leaseMs, run)
        : { claimed: false, current },
  );
}

/** What every claim writes: the run's fence, lease, start and runner, one more attempt. */
function runUpdate(update: Update, token: string, now: number, leaseMs: number, run: RunStamp): Update {
  update
    .set("status", "running")
    .set("leaseToken", token)
    .set("leaseUntil", now + leaseMs)
    .set("startedAt", now)
    .increment("attempts", 1)
    // A parked job leaves its key's waiting line (the index) as it starts.
    // A durable job's wait is over once it runs again (docs/architecture.md §22).
    .remove("gsi1pk", "gsi1sk", "promotingUntil", "parked", "parkedIn", "waiting");
  if (run.runner !== undefined) update.set("runner", run.runner);
  else update.remove("runner");
  if (run.deadline !== undefined) update.set("runDeadline", run.deadline);
  else update.remove("runDeadline");
  return update;
}

/** The takeover write (claim's second): fenced on the lapsed run's token, it records why that run ended. */
async function takeOver(
  ctx: StoreContext,
  previous: JobItem,
  token: string,
  leaseMs: number,
  run: RunStamp,
): Promise<ClaimResult> {
  // The lease counts from this write, not from the first one: a loaded store can take a second or
  // more over the lost write and its read, and a lease counted from before them would start short,
  // its run stopped by its own heartbeat's deadline within the first renewal.
  const now = ctx.clock.now();
  const lapsed = previous.leaseToken ?? "";
  const write = conditionalUpdate<JobItem>(ctx, "claim:takeover", jobKey(previous.id), (e) => ({
    update: runUpdate(new Update(e), token, now, leaseMs, run)
      .set("claimedFrom", "running")
      .setAll(withRecord(previous, lapsedRun(previous))),
    condition: lapsedRunOf(lapsed, now),
  }));
  return orOnConflict(
    write.then((item): ClaimResult => ({ claimed: true, item })),
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
