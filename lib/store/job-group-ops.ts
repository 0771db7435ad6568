import { leaseHeldBy, statusIs } from "./conditions.ts";
import { conditionalUpdate, orOnConflict, type StoreContext } from "./context.ts";
import { and, Update } from "./expression.ts";
import type { JobItem } from "./job-item.ts";
import { jobKey } from "./keys.ts";

/**
 * noteChildGroup — a running job's handler creates a group: the job remembers it (a cancel of the
 * job's own group reaches it), and the first such group takes over the job's membership in its group.
 * input: job id, the run's fence token, the group id.
 * condition: still running under this token (a run that lost its lease creates nothing).
 * result: the job after the write (its `handoff` names the group holding its membership), or undefined
 *   when the fence was lost. Declares no status edge.
 */
export async function noteChildGroup(
  ctx: StoreContext,
  jobId: string,
  token: string,
  groupId: string,
): Promise<JobItem | undefined> {
  const write = conditionalUpdate<JobItem>(
    ctx,
    "noteChildGroup",
    jobKey(jobId),
    (e) => ({
      update: new Update(e).setIfAbsent("handoff", groupId).addToSet("childGroups", new Set([groupId])),
      condition: and(statusIs("running"), leaseHeldBy(token)),
    }),
    { readCurrent: false },
  );
  return orOnConflict(write, () => undefined);
}
