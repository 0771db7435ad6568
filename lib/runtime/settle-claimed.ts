import { errorFields, jobFields } from "../observability/log.ts";
import type { RunEndForFlow } from "../services/flow-service.ts";
import { type FinalizeResult, finalize } from "../store/finalize-ops.ts";
import { BacklogTally } from "./backlog-tally.ts";
import { stowResult } from "./claim-check.ts";
import type { Claimed } from "./delivery.ts";
import { recordEndInGroups } from "./group-end.ts";
import type { Decision } from "./outcome.ts";
import { reportOutcome, toFinalization } from "./outcome-table.ts";
import { finalizeFitting } from "./oversized-ends.ts";
import { publishSettled } from "./realtime-status.ts";
import type { Ack, WorkerDeps } from "./record-types.ts";

/**
 * Writes a claimed run's decision under its fence, then settles the message to match (the outcome
 * table). A batch key's job that ended leaves its key's backlog: counted in `tally` when the caller
 * writes a call's at once. `throttle`: the queue's cool-down (Admission.throttle).
 */
export async function settleClaimed(
  deps: WorkerDeps,
  { item, delivery }: Claimed,
  decision: Decision,
  throttle: (now: number, delaySeconds: number) => Promise<void>,
  tally?: BacklogTally,
): Promise<Ack> {
  const { queue, fence, record } = delivery;
  const { store, clock, metrics, log } = deps;
  const fields = jobFields(item, item.attempts);
  if (decision.outcome === "abandon") {
    metrics.count("leaseLost", item.queue, item.kind);
    log.warn("lease lost mid-run; the new owner finishes the job", fields);
    return false;
  }
  const now = clock.now();
  // A kind that pauses when its attempts run out waits for an operator instead of ending dead (§21).
  if (
    decision.outcome === "dead" &&
    decision.exhausted &&
    deps.registry.get(item.kind)?.onExhausted === "pause"
  )
    decision = { outcome: "paused", error: decision.error };
  let ending = toFinalization(decision, queue, now);
  if (ending.outcome === "done") {
    const job = { id: item.id, attempt: item.attempts };
    ending = { ...ending, result: await stowResult(deps.claims, job, ending.result, now, ending.expiresAt) };
  }
  const suspension = decision.outcome === "suspend" ? decision.suspension : undefined;
  if (suspension && ending.outcome === "suspend") {
    const moved = await deps.durable.beforeSuspend(item, suspension, fence, queue.retentionDays);
    if (moved.length > 0) ending = { ...ending, moved };
  }
  let result: FinalizeResult;
  ({ result, decision } = await finalizeFitting(deps, item, fence, ending, decision, queue, now));
  if (!result.finalized && result.reason === "cancel_requested") {
    decision = { outcome: "cancelled", error: "cancelled on request" };
    result = await finalize(store, item, fence, toFinalization(decision, queue, now));
  }
  if (suspension) {
    const landed = result.finalized && decision.outcome === "suspend";
    const write = { fence, msg: delivery.msg, item: result.finalized ? result.item : item, landed };
    await deps.durable.afterSuspend(suspension, write, now);
  }
  if (!result.finalized) {
    metrics.count("leaseLost", item.queue, item.kind);
    log.warn("lease lost before finalize; leaving the job to its new owner", fields);
    return false;
  }
  publishSettled(deps.realtime, result.item);
  // A flow key's place goes on to its next waiting job, whatever the run came to (§20).
  await deps.flow.leavePlace(result.item);
  await deps.flow.learnFromRun(delivery.flow, delivery.msg, now, runEndForFlow(decision));
  if (!(await recordEndInGroups(deps, result.item))) return false;
  if (result.item.inBacklog) {
    const own = tally ?? new BacklogTally();
    own.note(result.item);
    if (!tally)
      await own
        .flush(store)
        .catch((error: unknown) =>
          log.warn("could not count a job out of its key's backlog", { ...fields, ...errorFields(error) }),
        );
  }
  return reportOutcome(deps, decision, {
    queue: item.queue,
    kind: item.kind,
    receiptHandle: record.receiptHandle,
    fields,
    visibility: delivery.visibility,
    // A flow-controlled job's throttle cools its key, not the queue: other keys run on (§20).
    throttle: async (delaySeconds) => {
      const named = decision.outcome === "throttled" ? decision : undefined;
      const reason = named?.reason ?? "throttled";
      const keyThrottle = { delaySeconds, reason, ...(named?.limit ? { limit: named.limit } : {}) };
      if (!(await deps.flow.coolKey(delivery.msg, now, keyThrottle))) await throttle(now, delaySeconds);
    },
  });
}

/** What a run's flow keys learn from how it ended: done, or a RetryAfterError naming a limit. */
function runEndForFlow(decision: Decision): RunEndForFlow {
  const done = decision.outcome === "done";
  if ((decision.outcome !== "retry" && decision.outcome !== "reschedule") || decision.limit === undefined)
    return { done };
  const { delaySeconds, limit, error: reason } = decision;
  return { done, retryAfter: { delaySeconds, limit, reason } };
}
