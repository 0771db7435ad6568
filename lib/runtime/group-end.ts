import { isTerminal } from "../job/status.ts";
import { errorFields, jobFields } from "../observability/log.ts";
import type { JobItem } from "../store/job-item.ts";
import type { Ack, WorkerDeps } from "./record-types.ts";

/**
 * A group's child or completion job that ended: its group hears of it (docs/architecture.md §15);
 * a durable handler's child (`ctx.invoke`): its waiting parent resumes (§22). false when that
 * failed: the message stays, and its next delivery finds the job finished and tries again, so a
 * job's end always reaches its group and its parent.
 */
export async function recordEndInGroups(
  deps: Pick<WorkerDeps, "groups" | "durable" | "log">,
  item: JobItem,
): Promise<Ack> {
  if (!item.member && !item.completes && !item.parent) return true;
  if (!isTerminal(item.status)) return true;
  try {
    if (item.member || item.completes) await deps.groups.recordEnd(item);
    if (item.parent) await deps.durable.childEnded(item);
    return true;
  } catch (error) {
    deps.log.warn("could not record a job's end in its group; its next delivery will", {
      ...jobFields(item),
      ...errorFields(error),
    });
    return false;
  }
}
