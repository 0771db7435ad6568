import type { StoreTransitions } from "../job/status.ts";
import { attributeAfter, leaseHeldBy, statusIs } from "./conditions.ts";
import { conditionalUpdate, orOnConflict, type StoreContext } from "./context.ts";
import { and, type Condition, type Expr, Update } from "./expression.ts";
import type { JobItem } from "./job-item.ts";
import { jobKey } from "./keys.ts";
import type { StepRecord } from "./step-record.ts";
import { raiseFormat } from "./stored-formats.ts";

/** The race's entry is there, and no branch has won it yet. */
const raceOpen =
  (name: string): Condition =>
  (e: Expr) => {
    const entry = e.entry("steps", name);
    return `attribute_exists(${entry}.${e.name("race")}) AND attribute_not_exists(${entry}.${e.name("w")})`;
  };

export type DecideRaceResult = { decided: true } | { decided: false; record: StepRecord | undefined };

/**
 * decideRace — a race recorded by an earlier run (`ctx.waitForAny`, lib/durable/race.ts) is won by a
 * token or a timer, decided in the run that meets it.
 * input: the job id, the run's fence, the race's name, the winner (w) and its data (v or o).
 * condition: running under this fence, its lease not yet ended AND the race's entry has no winner
 *   (an event's resume writes its own w with its data: whichever lands first won).
 * result: decided; or not, with the entry as it is now (its winner, when one is there; undefined
 *   when the run lost its lease).
 */
export async function decideRace(
  ctx: StoreContext,
  jobId: string,
  fence: string,
  name: string,
  won: Pick<StepRecord, "w" | "v" | "o">,
): Promise<DecideRaceResult> {
  const write = conditionalUpdate<JobItem>(ctx, "decideRace", jobKey(jobId), (e) => {
    const update = new Update(e);
    for (const [field, value] of Object.entries(won))
      if (value !== undefined) update.setEntry("steps", name, value, field);
    raiseFormat(update, "job");
    const live = attributeAfter("leaseUntil", ctx.clock.now());
    return { update, condition: and(statusIs("running"), leaseHeldBy(fence), live, raceOpen(name)) };
  });
  return orOnConflict(
    write.then((): DecideRaceResult => ({ decided: true })),
    (current: JobItem | undefined): DecideRaceResult => {
      const ours = current?.status === "running" && current.leaseToken === fence;
      return { decided: false, record: ours ? current?.steps?.[name] : undefined };
    },
  );
}

/** The job stays running: only its race's entry changes. */
export const decideRaceTransitions = [] as const satisfies StoreTransitions;
