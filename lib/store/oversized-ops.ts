import type { StoreTransitions } from "../job/status.ts";
import { leaseHeldBy, statusIn, statusIs } from "./conditions.ts";
import { conditionalUpdate, type StoreContext } from "./context.ts";
import { and, type Condition, Update } from "./expression.ts";
import type { JobItem } from "./job-item.ts";
import { indexKeys, jobKey } from "./keys.ts";

/** What an oversized job's end says, after the refused write's own words. */
export const OVERSIZED_NOTE =
  "the job's item reached DynamoDB's 400 KB limit, so no write could add to it: the job ended with its steps map dropped (their bodies in the claims bucket are kept)";

export interface OversizedEnd {
  /** dead for a run or a claim that could not write; cancelled for a user's cancel. */
  as: "dead" | "cancelled";
  /** The refused write's error (ItemTooLarge's message), kept as the job's lastError. */
  error: string;
  expiresAt: number;
  /** The run's lease token, when a run of the job ends it: a takeover's run is not ended from here. */
  fence?: string;
}

/**
 * endOversized — a job whose item DynamoDB refuses to grow (an item at its 400 KB limit) ends, since
 *   the same write would fail on every retry and the job would never end (not even by a cancel).
 * input: the job (id, queue), how it ends (dead or cancelled), the refused write's error, the TTL,
 *   and the run's fence when a run ends it.
 * condition: not finished (queued, scheduled or running; paused too for a cancel); under `fence` when
 *   one is given.
 * result: the job, dead (in the status index) or cancelled (out of it), its lease and wait gone and
 *   its `steps` map REMOVEd: what made the item large, so this write always fits. Its history and
 *   payload stay. StoreConflict when it finished, or another run took it, meanwhile.
 */
export async function endOversized(
  ctx: StoreContext,
  job: { id: string; queue: string },
  end: OversizedEnd,
): Promise<JobItem> {
  const now = ctx.clock.now();
  return conditionalUpdate<JobItem>(ctx, `endOversized:${end.as}`, jobKey(job.id), (e) => {
    const update = new Update(e)
      .set("status", end.as)
      .set("lastError", `${end.error}; ${OVERSIZED_NOTE}`)
      .set("finishedAt", now)
      .set("expiresAt", end.expiresAt)
      .remove("steps", "waiting", "leaseToken", "leaseUntil");
    if (end.as === "dead") update.setAll(indexKeys(job.queue, "dead", job.id, now, ctx.layout.indexShards));
    else update.set("cancelRequested", true).remove("gsi1pk", "gsi1sk");
    // A paused job waits for an operator, who may cancel it; no run or claim ends it dead.
    const open: Condition =
      end.as === "dead"
        ? statusIn("queued", "scheduled", "running")
        : statusIn("queued", "scheduled", "running", "paused");
    return { update, condition: end.fence ? and(statusIs("running"), leaseHeldBy(end.fence)) : open };
  });
}

export const endOversizedTransitions = [
  ["queued", "dead"],
  ["scheduled", "dead"],
  ["running", "dead"],
  ["queued", "cancelled"],
  ["scheduled", "cancelled"],
  ["running", "cancelled"],
  ["paused", "cancelled"],
] as const satisfies StoreTransitions;
