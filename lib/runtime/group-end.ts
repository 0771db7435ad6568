import { isTerminal } from "../job/status.ts";
import { errorFields, jobFields } from "../observability/log.ts";
import type { JobItem } from "../store/job-item.ts";
import type { Ack, WorkerDeps } from "./record-types.ts";

/**
 * A group's child or completion job that ended: its group hears of it (docs/architecture.md §15).
 * false when that failed: the message stays, and its next delivery finds the job finished and tries
 * again, so a job's end always reaches its group.
 */
export async function recordEndInGroups(
  deps: Pick<WorkerDeps, "groups" | "log">,
  item: JobItem,
): Promise<Ack> {
  if (!item.member && !item.completes) return true;
  if (!isTerminal(item.status)) return true;
  try {
    await deps.groups.recordEnd(item);
    return true;
  } catch (error) {
    deps.log.warn("could not record a job's end in its group; its next delivery will", {
      ...jobFields(item),
      ...errorFields(error),
    });
    return false;
  }
}
