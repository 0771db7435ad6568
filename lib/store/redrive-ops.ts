import { InvalidItemState, ItemNotFound } from "../errors.ts";
import type { StoreTransitions } from "../job/status.ts";
import { statusIn, statusIs } from "./conditions.ts";
import { conditionalUpdate, orOnConflict, type StoreContext } from "./context.ts";
import { Update } from "./expression.ts";
import type { JobItem } from "./job-item.ts";
import { indexKeys, jobKey } from "./keys.ts";

/** A resume (POST /jobs/{id}/resume): the paused job's new payload, as the store keeps it, if any. */
export interface Resume {
  payload?: Pick<JobItem, "payload" | "payloadRef" | "payloadObject">;
  /**
   * A durable job's version goes: the resume accepts the code in force, whose run's next record
   * sets its own (§22, Versions). Not set here: the API's bundle may hash a handler otherwise.
   */
  dropVersion?: true;
}

/**
 * redrive — an operator's retry of a dead or cancelled job, or the resume of a paused one (§21).
 * input: the job as last read (its queue names the index partition); `resume` for a paused job,
 *   with its new payload's fields if it gets one, and for a durable job with a version, that it goes.
 * condition: dead or cancelled; with `resume`, paused.
 * result: scheduled and due now, attempts reset, its start deadline gone, in the scheduled index, held against promotion until
 *   `holdUntil` (the caller is about to send its message and mark it queued). If the caller dies in
 *   between, the reaper promotes it once the hold lapses (no loss, no second message before then).
 */
export async function redrive(
  ctx: StoreContext,
  job: { id: string; queue: string },
  holdUntil: number,
  resume?: Resume,
): Promise<JobItem> {
  const now = ctx.clock.now();
  const write = conditionalUpdate<JobItem>(ctx, resume ? "resume" : "redrive", jobKey(job.id), (e) => ({
    update: withoutVersion(withPayload(new Update(e), resume?.payload), resume?.dropVersion)
      .set("status", "scheduled")
      .set("runAt", now)
      .set("attempts", 0)
      .set("promotingUntil", holdUntil)
      .setAll(indexKeys(job.queue, "scheduled", job.id, now, ctx.layout.indexShards))
      .remove(
        "result",
        "resultObject",
        "lastError",
        "finishedAt",
        "expiresAt",
        "cancelRequested",
        "startedAt",
        // The last run's history record names its runner; the next claim stamps its own.
        "runner",
        "runDeadline",
        // An operator asked for this run: a start deadline that ended the job must not end it again.
        "startBy",
      ),
    condition: resume ? statusIs("paused") : statusIn("dead", "cancelled"),
  }));
  return orOnConflict(write, (current: JobItem | undefined) => {
    if (!current) throw new ItemNotFound(`job ${job.id} not found`);
    throw new InvalidItemState(
      resume
        ? `job ${job.id} is ${current.status}; only paused jobs can be resumed`
        : `job ${job.id} is ${current.status}; only dead or cancelled jobs can be retried`,
      current,
    );
  });
}

/** A resume's new payload replaces the old one, wherever either is kept. */
function withPayload(update: Update, payload: Resume["payload"]): Update {
  if (!payload) return update;
  const fields = ["payload", "payloadRef", "payloadObject"] as const;
  for (const f of fields) {
    const value = payload[f];
    if (value === undefined) update.remove(f);
    else update.set(f, value);
  }
  return update;
}

export const redriveTransitions = [
  ["dead", "scheduled"],
  ["cancelled", "scheduled"],
  // A resume: a paused job runs again with a fresh set of attempts.
  ["paused", "scheduled"],
] as const satisfies StoreTransitions;

/** A resumed durable job's version dropped, when the operator's resume accepts the code in force. */
function withoutVersion(update: Update, drop: true | undefined): Update {
  return drop ? update.remove("version") : update;
}
