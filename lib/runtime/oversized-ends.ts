import type { QueueDeclaration } from "../declarations/queue-declaration.ts";
import { ItemTooLarge, StoreConflict } from "../errors.ts";
import { retentionExpiry } from "../retention.ts";
import { type Finalization, type FinalizeResult, finalize } from "../store/finalize-ops.ts";
import type { JobSeed } from "../store/job-fields.ts";
import type { JobItem } from "../store/job-item.ts";
import { type ClaimResult, claim } from "../store/lease-ops.ts";
import { endOversized } from "../store/oversized-ops.ts";
import type { Settled } from "./outcome-table.ts";
import type { WorkerDeps } from "./record-types.ts";

/**
 * A run's finalize; when DynamoDB refuses it for the item's size (an item at its 400 KB limit, which
 * every later write would hit too, the takeover's and a cancel's included), the run ends its job dead
 * instead, under the same fence, with its steps map dropped (endOversized). result: the write's
 * result, and the decision the message is settled by (dead when the job ended so).
 */
export async function finalizeFitting(
  deps: Pick<WorkerDeps, "store" | "log">,
  item: JobItem,
  fence: string,
  ending: Finalization,
  decision: Settled,
  queue: QueueDeclaration,
  now: number,
): Promise<{ result: FinalizeResult; decision: Settled }> {
  try {
    return { result: await finalize(deps.store, item, fence, ending), decision };
  } catch (err) {
    if (!(err instanceof ItemTooLarge)) throw err;
    // A run that was ending dead anyway keeps its own reason (a step the item couldn't take, named).
    const error = decision.outcome === "dead" ? decision.error : err.message;
    const dead: Settled = { outcome: "dead", error };
    try {
      const ended = await endDead(deps, item, error, queue, now, fence);
      return { result: { finalized: true, item: ended }, decision: dead };
    } catch (lost) {
      if (!(lost instanceof StoreConflict)) throw lost;
      return { result: { finalized: false, reason: "lease_lost", current: undefined }, decision };
    }
  }
}

/**
 * A delivery's claim; when DynamoDB refuses it for the item's size (a takeover adds the lapsed run's
 * record, so an item at its limit could never be claimed again, and its message would come back until
 * the dead-letter queue), the job ends dead instead (endOversized), which the caller sees as a claim
 * lost to a finished job: its message is dropped.
 */
export async function claimFitting(
  deps: Pick<WorkerDeps, "store" | "log">,
  seed: JobSeed,
  fence: string,
  leaseMs: number,
  run: Parameters<typeof claim>[4],
  queue: QueueDeclaration,
): Promise<ClaimResult> {
  try {
    return await claim(deps.store, seed, fence, leaseMs, run);
  } catch (err) {
    if (!(err instanceof ItemTooLarge)) throw err;
    const job = { id: seed.id, queue: queue.name };
    const current = await endDead(deps, job, err.message, queue, deps.store.clock.now()).catch(
      (lost: unknown) => {
        if (lost instanceof StoreConflict) return lost.current as JobItem | undefined;
        throw lost;
      },
    );
    return { claimed: false, current };
  }
}

/** The job ends dead through endOversized, kept as long as its queue keeps dead jobs. */
function endDead(
  deps: Pick<WorkerDeps, "store" | "log">,
  job: { id: string; queue: string },
  error: string,
  queue: QueueDeclaration,
  now: number,
  fence?: string,
): Promise<JobItem> {
  deps.log.error("a job's item reached DynamoDB's 400 KB limit: it ends dead", { jobId: job.id });
  const expiresAt = retentionExpiry(now, queue.retentionDays.dead);
  return endOversized(deps.store, job, { as: "dead", error, expiresAt, ...(fence ? { fence } : {}) });
}
