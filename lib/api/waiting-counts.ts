import { ClientError } from "../errors.ts";
import type { Engine } from "../services/engine-services.ts";
import { countWaiting, type WaitingCount } from "../store/waiting-count-ops.ts";

/** GET /jobs?waiting=true's answer: suspended durable jobs per queue, kind and version. */
export interface WaitingCounts {
  waiting: WaitingCount[];
  /** false when the count stopped at its bound: the numbers are then at least these. */
  complete: boolean;
}

/**
 * GET /jobs?waiting=true[&queue=…]: what a deploy's new versions will meet (docs/guide/durable-jobs.md,
 * "Versions"). `query`: the request's parameters, already checked as a list query; any but `queue`
 * and `waiting` is a 400 (a count has no page, view or status), as is a queue not declared.
 */
export async function waitingCounts(
  engine: Pick<Engine, "store" | "queues">,
  query: Record<string, string | undefined>,
): Promise<WaitingCounts> {
  const extra = Object.keys(query).filter((k) => k !== "waiting" && k !== "queue");
  if (extra.length > 0)
    throw new ClientError(
      "validation_error",
      `waiting=true counts suspended jobs and takes only queue, not ${extra.join(", ")}`,
    );
  const declared = engine.queues.map((q) => q.name);
  if (query.queue !== undefined && !declared.includes(query.queue))
    throw new ClientError("validation_error", `queue ${query.queue} is not declared`);
  const { counts, complete } = await countWaiting(engine.store, query.queue ? [query.queue] : declared);
  return { waiting: counts, complete };
}
