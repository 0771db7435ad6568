import type { Clock } from "../clock.ts";
import { ClientError } from "../errors.ts";
import type { JobView } from "../job/schemas.ts";
import { promotionHoldUntil, sendPromoted } from "../ops/promote.ts";
import type { StoreContext } from "../store/context.ts";
import { redrive } from "../store/finalize-ops.ts";
import { toJobView } from "../store/job-item.ts";
import { getJob } from "../store/read-ops.ts";
import type { SqsTransport } from "../transport/sqs-transport.ts";

/**
 * Operator retry of a dead or cancelled job: the store moves it to `scheduled` (indexed and held, so
 * a crash here still leaves it for the reaper), then its message goes out, then it is marked queued.
 */
export async function redriveJob(
  deps: { store: StoreContext; transport: SqsTransport; clock: Clock },
  id: string,
): Promise<JobView> {
  const job = await getJob(deps.store, id);
  if (!job) throw new ClientError("not_found", `job ${id} not found`);
  const now = deps.clock.now();
  const moved = await redrive(deps.store, job, promotionHoldUntil(now, now));
  const { payload, queued } = await sendPromoted(deps, moved);
  return toJobView(queued ? { ...moved, status: "queued" } : moved, payload);
}
