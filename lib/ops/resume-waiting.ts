import type { Engine } from "../services/engine-services.ts";
import { resumeWaiting, type WaitMatch } from "../store/step-ops.ts";
import type { StepRecord } from "../store/step-record.ts";
import { outgoingJob } from "./promote.ts";

/**
 * Ends a suspended job's wait (docs/architecture.md §22): the job is queued by one conditional
 * write, then its message is sent. Whoever wins the write sends; a loser (the job was cancelled,
 * timed out, or already resumed) sends nothing. A crash between the two leaves a queued job without
 * a message, which the stale-message sweep sends again. result: whether this call resumed it.
 */
export async function resumeJob(
  deps: Pick<Engine, "store" | "claims" | "transport" | "clock" | "metrics">,
  jobId: string,
  match: WaitMatch,
  data?: Pick<StepRecord, "v" | "o">,
): Promise<boolean> {
  const item = await resumeWaiting(deps.store, jobId, match, data);
  if (!item) return false;
  await deps.transport.send(await outgoingJob(deps, item));
  deps.metrics.count("resumed", item.queue, item.kind);
  return true;
}
