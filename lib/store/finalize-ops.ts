import { InvalidItemState, ItemNotFound } from "../errors.ts";
import type { StoreTransitions } from "../job/status.ts";
import { endedRun, type HistoryFields, withRecord } from "./attempt-history.ts";
import { cancelNotRequested, itemMissing, leaseHeldBy, statusIn, statusIs } from "./conditions.ts";
import { conditionalPut, conditionalUpdate, orOnConflict, type StoreContext } from "./context.ts";
import { and, type Condition, Update } from "./expression.ts";
import { type JobItem, resultFields, type StoredResult } from "./job-item.ts";
import { indexKeys, jobKey } from "./keys.ts";
import { addStep } from "./step-ops.ts";
import type { StepRecord, WaitingRecord } from "./step-record.ts";
import { formatStamp } from "./stored-formats.ts";

/** How a run ends. `expiresAt` is the TTL of a terminal item, from the queue's retention. */
export type Finalization =
  | { outcome: "done"; result: StoredResult; expiresAt: number }
  | { outcome: "retry"; runAt: number; error: string }
  /** A retry further out than SQS can hold a message: back to the scheduled index. */
  | { outcome: "reschedule"; runAt: number; error: string }
  | { outcome: "throttled"; runAt: number; reason: string }
  /** Handed back by a stopping pool: due now, the attempt given back. */
  | { outcome: "released"; runAt: number }
  /**
   * `unstarted`: the run ended before its handler was called (its start deadline passed), so it is
   * no attempt: the claim's count is given back, and the item keeps the last run that did start.
   */
  | { outcome: "dead"; error: string; expiresAt: number; unstarted?: true }
  /** Its last attempt used, a kind with `onExhausted: "pause"` waits for an operator (§21). */
  | { outcome: "paused"; error: string }
  | { outcome: "cancelled"; expiresAt: number; error?: string }
  /**
   * A durable job's run ends to wait (docs/architecture.md §22): scheduled until `runAt` (the
   * sleep's end, the wait's timeout), the attempt given back. `step`: the sleep's or event wait's
   * record, written by the same write. `holdUntil`: a wake-up message goes out, so the reaper keeps
   * off until then. `moved`: recorded steps whose claims object was copied under a longer class for
   * the wait (docs/architecture.md §22, Retention), each record pointed at its new key.
   */
  | {
      outcome: "suspend";
      runAt: number;
      waiting: WaitingRecord;
      step?: { name: string; record: StepRecord; mapExists: boolean; version?: string };
      holdUntil?: number;
      moved?: readonly { name: string; o: string }[];
    };

export type FinalizeResult =
  | { finalized: true; item: JobItem }
  | { finalized: false; reason: "lease_lost" | "cancel_requested"; current: JobItem | undefined };

const LEASE_ATTRS = ["leaseToken", "leaseUntil"] as const;

function finalizeUpdate(
  u: Update,
  f: Finalization,
  item: { id: string; queue: string } & Partial<HistoryFields>,
  now: number,
  shards: number,
): Update {
  switch (f.outcome) {
    case "done":
      return u
        .set("status", "done")
        .setAll(resultFields(f.result))
        .set("finishedAt", now)
        .set("expiresAt", f.expiresAt)
        .remove(...LEASE_ATTRS);
    case "retry":
      return u
        .set("status", "queued")
        .set("runAt", f.runAt)
        .set("lastError", f.error)
        .remove(...LEASE_ATTRS);
    case "reschedule":
      return u
        .set("status", "scheduled")
        .set("runAt", f.runAt)
        .set("lastError", f.error)
        .setAll(indexKeys(item.queue, "scheduled", item.id, f.runAt, shards))
        .remove(...LEASE_ATTRS);
    case "throttled":
    case "released":
      // The attempt the claim counted is given back: neither a throttle nor a stop is the job's fault.
      return u
        .set("status", "queued")
        .set("runAt", f.runAt)
        .increment("attempts", -1)
        .remove(...LEASE_ATTRS);
    case "dead":
      u.set("status", "dead")
        .set("lastError", f.error)
        .set("finishedAt", now)
        .set("expiresAt", f.expiresAt)
        .setAll(indexKeys(item.queue, "dead", item.id, now, shards))
        .remove(...LEASE_ATTRS);
      return f.unstarted ? unclaimedRun(u, item) : u;
    case "suspend":
      u.set("status", "scheduled")
        .set("runAt", f.runAt)
        .set("waiting", f.waiting)
        .increment("attempts", -1)
        .setAll(indexKeys(item.queue, "scheduled", item.id, f.runAt, shards))
        .remove(...LEASE_ATTRS);
      if (f.holdUntil !== undefined) u.set("promotingUntil", f.holdUntil);
      for (const { name, o } of f.moved ?? []) u.setEntry("steps", name, o, "o");
      return u;
    case "paused":
      // Not terminal: no TTL; in the status index, so GET /jobs?status=paused finds it without a scan.
      return u
        .set("status", "paused")
        .set("lastError", f.error)
        .setAll(indexKeys(item.queue, "paused", item.id, now, shards))
        .remove(...LEASE_ATTRS);
    case "cancelled":
      u.set("status", "cancelled")
        .set("finishedAt", now)
        .set("expiresAt", f.expiresAt)
        .remove(...LEASE_ATTRS);
      if (f.error) u.set("lastError", f.error);
      return u;
  }
}

/**
 * The claim of a run that never started, taken back: its attempt uncounted, and the start and runner
 * of the last run that did (the history's last record), or none when no run ever started.
 */
function unclaimedRun(u: Update, item: Partial<HistoryFields>): Update {
  u.increment("attempts", -1).remove("runDeadline");
  const last = item.history?.at(-1);
  if (last === undefined) return u.remove("startedAt", "runner");
  u.set("startedAt", last.s);
  return last.r === undefined ? u.remove("runner") : u.set("runner", last.r);
}

/** Why a run ended, for its history record. */
function errorOf(f: Finalization): string | undefined {
  if (f.outcome === "throttled") return f.reason;
  return "error" in f ? f.error : undefined;
}

/**
 * finalize — record how a run ended.
 * input: job id + queue, the fence token, the outcome; the job as its claim left it (its start,
 *   runner and history: the run's record is appended to the history, except a success's, which the
 *   item's own fields describe, so a first-attempt success adds no list, and that of a run ended dead
 *   before its handler was called (`unstarted`), whose claim is taken back: attempts, start, runner).
 * condition: still running under this token; for every outcome but done and cancelled, also no cancel
 *   requested (a cancel beats a retry or a death; a job that finished stays done).
 * result: the new item; or lease_lost (a takeover owns it now: write nothing) or cancel_requested
 *   (the caller finalizes as cancelled instead).
 */
export async function finalize(
  ctx: StoreContext,
  job: { id: string; queue: string } & Partial<HistoryFields>,
  token: string,
  f: Finalization,
): Promise<FinalizeResult> {
  const now = ctx.clock.now();
  const guards: Condition[] = [statusIs("running"), leaseHeldBy(token)];
  if (f.outcome !== "done" && f.outcome !== "cancelled") guards.push(cancelNotRequested);
  const write = conditionalUpdate<JobItem>(ctx, `finalize:${f.outcome}`, jobKey(job.id), (e) => {
    const update = finalizeUpdate(new Update(e), f, job, now, ctx.layout.indexShards);
    // Under the fence nothing else writes the history: the claim's copy of it is the stored one.
    const ran = f.outcome !== "done" && !(f.outcome === "dead" && f.unstarted);
    const ended = ran ? endedRun({ attempts: 0, ...job }, f.outcome, now, errorOf(f)) : undefined;
    if (ended) update.setAll(withRecord({ attempts: 0, ...job }, ended));
    const step = f.outcome === "suspend" ? f.step : undefined;
    const fresh = step ? [addStep(update, step.name, step.record, step.mapExists, step.version)] : [];
    return { update, condition: and(...guards, ...fresh) };
  });
  return orOnConflict(
    write.then((item): FinalizeResult => ({ finalized: true, item })),
    (current: JobItem | undefined): FinalizeResult => {
      const stillOurs = current?.status === "running" && current.leaseToken === token;
      return {
        finalized: false,
        reason: stillOurs && current?.cancelRequested ? "cancel_requested" : "lease_lost",
        current,
      };
    },
  );
}

/** retry/throttled/released → queued, reschedule/suspend → scheduled, done, dead, cancelled, paused. */
export const finalizeTransitions = [
  ["running", "queued"],
  ["running", "scheduled"],
  ["running", "done"],
  ["running", "dead"],
  ["running", "cancelled"],
  ["running", "paused"],
] as const satisfies StoreTransitions;

/** What a cancel ends at once; a running job is only asked to stop. */
const CANCELLABLE_AT_ONCE = ["queued", "scheduled", "paused"] as const;

/**
 * cancel — a user's cancel.
 * input: job id, the TTL for a cancelled item.
 * condition (first write): queued, scheduled or paused → cancelled at once, leaving the index.
 *   (second write, only when the job is running): still running → cancelRequested, which the owner's
 *   heartbeat turns into an abort.
 * result: the job after the write and what the cancel did: "cancelled" (it was queued or scheduled),
 *   "requested" (it is running: its owner stops it at its next heartbeat, unless it finishes first),
 *   "already_cancelled". InvalidItemState (with the job) when it already finished as done or dead;
 *   ItemNotFound.
 */
export async function cancel(ctx: StoreContext, id: string, expiresAt: number): Promise<CancelResult> {
  const now = ctx.clock.now();
  const direct = conditionalUpdate<JobItem>(ctx, "cancel", jobKey(id), (e) => ({
    update: new Update(e)
      .set("status", "cancelled")
      .set("cancelRequested", true)
      .set("finishedAt", now)
      .set("expiresAt", expiresAt)
      .remove("gsi1pk", "gsi1sk"),
    condition: statusIn(...CANCELLABLE_AT_ONCE),
  }));
  const done = direct.then((item): CancelResult => ({ outcome: "cancelled", item }));
  return orOnConflict(done, (current: JobItem | undefined) => {
    if (!current) throw new ItemNotFound(`job ${id} not found`);
    if (current.status === "cancelled") return { outcome: "already_cancelled", item: current };
    // Lost while it ran, and read afterwards (an emulator returns no item with the refusal): its run
    // ended in between, back to queued or scheduled (a durable job's suspend). Cancellable at once again.
    if ((CANCELLABLE_AT_ONCE as readonly string[]).includes(current.status))
      return cancel(ctx, id, expiresAt);
    if (current.status !== "running") {
      throw new InvalidItemState(
        `job ${id} is already ${current.status} and can no longer be cancelled`,
        current,
      );
    }
    const request = conditionalUpdate<JobItem>(ctx, "requestCancel", jobKey(id), (e) => ({
      update: new Update(e).set("cancelRequested", true),
      condition: statusIs("running"),
    }));
    // It finished between our two writes; try once more from the top to answer with its real state.
    return orOnConflict(
      request.then((item): CancelResult => ({ outcome: "requested", item })),
      () => cancel(ctx, id, expiresAt),
    );
  });
}

export type CancelResult = { outcome: "cancelled" | "requested" | "already_cancelled"; item: JobItem };

/** A running job only gets cancelRequested: its owner finalizes it (finalizeTransitions). */
export const cancelTransitions = [
  ["queued", "cancelled"],
  ["scheduled", "cancelled"],
  // An operator ends a paused job instead of resuming it (docs/architecture.md §21).
  ["paused", "cancelled"],
] as const satisfies StoreTransitions;

/**
 * tombstone — a cancel of a job with no item yet: a lean job still queued (its item is built by the
 * claim), or a fenced one whose item write was lost. A cancelled item under its id makes the claim
 * lose, so the message is dropped unrun (docs/architecture.md §16).
 * input: the id, the TTL. condition: no item. result: the tombstone, or undefined when an item
 *   appeared first (the caller cancels that one instead).
 */
export async function tombstone(
  ctx: StoreContext,
  id: string,
  expiresAt: number,
): Promise<JobItem | undefined> {
  const now = ctx.clock.now();
  const item: JobItem = {
    ...jobKey(id),
    id,
    kind: "(not started)",
    queue: "(not started)",
    status: "cancelled",
    attempts: 0,
    maxAttempts: 0,
    priority: "normal",
    createdAt: now,
    runAt: now,
    finishedAt: now,
    cancelRequested: true,
    lastError: "cancelled before it started",
    expiresAt,
    ...formatStamp("job"),
  };
  return orOnConflict(
    conditionalPut(ctx, "tombstone", item as JobItem & Record<string, unknown>, itemMissing, {
      readCurrent: false,
    }).then(() => item),
    () => undefined,
  );
}

export const tombstoneTransitions = [["missing", "cancelled"]] as const satisfies StoreTransitions;
