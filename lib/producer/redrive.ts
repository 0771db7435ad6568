import { loadJobView } from "../claims/job-bodies.ts";
import { ClientError } from "../errors.ts";
import type { JobView } from "../job/schemas.ts";
import { promotionHoldUntil, sendPromoted } from "../ops/promote.ts";
import type { Engine } from "../services/engine-services.ts";
import { getJob } from "../store/read-ops.ts";
import { redrive } from "../store/redrive-ops.ts";

/**
 * Operator retry of a dead or cancelled job: the store moves it to `scheduled` (indexed and held, so
 * a crash here still leaves it for the reaper), then its message goes out, then it is marked queued.
 */
export async function redriveJob(
  deps: Pick<Engine, "store" | "claims" | "transport" | "clock"> & Partial<Pick<Engine, "realtime">>,
  id: string,
): Promise<JobView> {
  const job = await getJob(deps.store, id);
  if (!job) throw new ClientError("not_found", `job ${id} not found`);
  const now = deps.clock.now();
  const moved = await redrive(deps.store, job, promotionHoldUntil(now, now));
  const { queued } = await sendPromoted(deps, moved);
  const back = queued ? { ...moved, status: "queued" as const } : moved;
  deps.realtime?.queued(back);
  return loadJobView(deps.store, deps.claims, back);
}
