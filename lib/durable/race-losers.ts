import type { Engine } from "../services/engine-services.ts";
import { deleteEventWaiter } from "../store/event-waiter-ops.ts";
import type { JobItem } from "../store/job-item.ts";
import { cancelToken } from "../store/token-ops.ts";

/**
 * A race was won (`ctx.waitForAny`, lib/durable/race.ts): its other branches are cancelled, so
 * nothing keeps the job waiting on them. Each losing token goes pending → cancelled (a completion
 * after it answers 409; one that landed first keeps its data, which the race doesn't read); each
 * losing event branch's pointer is deleted (any version of the race's: the race is over). Called by
 * whoever won: an event's delivery at once, the job's own run for a token or a timer. Idempotent.
 */
export async function loseRace(
  deps: Pick<Engine, "store">,
  job: Pick<JobItem, "id" | "steps">,
  race: string,
  winner: string,
): Promise<void> {
  for (const b of job.steps?.[race]?.race ?? []) {
    if (b.b === winner) continue;
    if (b.token !== undefined) await cancelToken(deps.store, b.token);
    if (b.event !== undefined && b.match !== undefined)
      await deleteEventWaiter(deps.store, b.event, b.match, job.id, { step: race });
  }
}
