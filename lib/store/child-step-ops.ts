import type { StoreTransitions } from "../job/status.ts";
import { statusIn } from "./conditions.ts";
import { conditionalUpdateNoReturn, type StoreContext, wonRace } from "./context.ts";
import { and, type Condition, type Expr, Update } from "./expression.ts";
import { jobKey } from "./keys.ts";
import type { StepRecord } from "./step-record.ts";

/** The job's step `name` records child `child` (`ctx.invoke`) and not yet its end. */
const childStepOpen =
  (name: string, child: string): Condition =>
  (e: Expr) =>
    [
      `${e.entry("steps", name)}.${e.name("child")} = ${e.value(child)}`,
      `attribute_not_exists(${e.entry("steps", name)}.${e.name("v")})`,
      `attribute_not_exists(${e.entry("steps", name)}.${e.name("o")})`,
    ].join(" AND ");

/**
 * recordChildOutcome — a child job's end, into its parent's step, while the parent waits for another
 *   (`ctx.invokeMany`: one wait at a time, docs/architecture.md §22), so the parent's replay reads it
 *   from its own item instead of from each child again.
 * input: the parent's id, its step's name, the child's id, the outcome's body (v or o).
 * condition: the parent has not ended AND its step records this child AND not yet its end.
 * result: whether it landed. The parent's status, lease and wait are untouched: a run of it that holds
 *   the item meanwhile writes other entries, never this one.
 */
export async function recordChildOutcome(
  ctx: StoreContext,
  parentId: string,
  step: string,
  child: string,
  body: Pick<StepRecord, "v" | "o">,
): Promise<boolean> {
  const write = conditionalUpdateNoReturn(
    ctx,
    "recordChildOutcome",
    jobKey(parentId),
    (e) => {
      const update = new Update(e);
      for (const [field, value] of Object.entries(body))
        if (value !== undefined) update.setEntry("steps", step, value, field);
      const open = statusIn("queued", "scheduled", "running", "paused");
      return { update, condition: and(open, childStepOpen(step, child)) };
    },
    { readCurrent: false },
  );
  return wonRace(write);
}

/** The job's status stays as it is: only its step's entry gains the child's end. */
export const recordChildOutcomeTransitions = [] as const satisfies StoreTransitions;
