import { outgoingJob, promotionHoldUntil } from "../ops/promote.ts";
import type { Engine } from "../services/engine-services.ts";
import { getJob } from "../store/read-ops.ts";
import { resumeWaiting, type WaitMatch } from "../store/step-ops.ts";
import type { StepRecord } from "../store/step-record.ts";

/**
 * Resumes a waiting job: ends a suspended durable job's wait (docs/architecture.md §22), for its
 * token, its event or its sleep's end. Not an operator's resume of a paused job (§21:
 * lib/producer/resume-paused.ts): one conditional write makes the job due
 * now and holds the reaper off, then its message is sent. Whoever wins the write sends; a loser (the
 * job was cancelled, timed out, or already resumed) sends nothing. A crash between the two leaves the
 * job to the reaper's promotion once the hold lapses. The message is built from the job as read
 * after the write (which returns no item: lib/store/step-ops.ts); a job gone or moved on by then
 * (cancelled) gets none. result: whether this call resumed it.
 */
export async function resumeWaitingJob(
  deps: Pick<Engine, "store" | "claims" | "transport" | "clock" | "metrics">,
  job: { id: string; queue: string },
  match: WaitMatch,
  data?: Pick<StepRecord, "v" | "o" | "e" | "w">,
): Promise<boolean> {
  const now = deps.clock.now();
  if (!(await resumeWaiting(deps.store, job, match, promotionHoldUntil(now, now), data))) return false;
  const item = await getJob(deps.store, job.id);
  if (!item) return true;
  deps.metrics.count("resumed", item.queue, item.kind);
  if (item.status === "scheduled") await deps.transport.send(await outgoingJob(deps, item));
  return true;
}
