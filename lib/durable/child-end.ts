import { durableKeepUntil, stepPart, stowDurable } from "../claims/durable-bodies.ts";
import { loadResult } from "../claims/job-bodies.ts";
import { ChildJobError, UnrecoverableError } from "../errors.ts";
import { isTerminal } from "../job/status.ts";
import { recordChildOutcome } from "../store/child-step-ops.ts";
import type { JobItem } from "../store/job-item.ts";
import type { DurableDeps } from "./durable-deps.ts";
import { resumeWaitingJob } from "./resume-waiting.ts";

/**
 * A child job's end as its parent's step records it (the step entry's v or o): its result, or why it
 * has none. The same whoever wrote it: the child's end, or the parent's replay that found it ended.
 */
export type ChildOutcome =
  | { status: "done"; result?: unknown }
  | { status: "dead" | "cancelled"; error: string };

/** The outcome's JSON of a child that ended; the result's JSON is spliced in, never parsed here. */
export async function childOutcomeJson(deps: Pick<DurableDeps, "claims">, child: JobItem): Promise<string> {
  if (child.status === "done") {
    const result = await loadResult(deps.claims, child);
    return result === undefined ? `{"status":"done"}` : `{"status":"done","result":${result}}`;
  }
  const error = child.lastError ?? `the job was ${child.status}`;
  return JSON.stringify({ status: child.status, error });
}

/** The parent's value of a child's outcome: its result, or ChildJobError carrying the child's error. */
export function childValue(step: string, childId: string, outcome: ChildOutcome): unknown {
  if (outcome.status === "done") return outcome.result;
  if (outcome.status === "dead" || outcome.status === "cancelled")
    throw new ChildJobError(step, childId, outcome.status, outcome.error);
  throw new UnrecoverableError(`child step "${step}": job ${childId}'s outcome is unreadable`);
}

/** A queue's retention as declared; for one no longer declared, the longest any queue keeps. */
function retentionOf(deps: Pick<DurableDeps, "queues">, queue: string): { done: number; dead: number } {
  const declared = deps.queues.find((q) => q.name === queue);
  if (declared) return declared.retentionDays;
  return {
    done: Math.max(...deps.queues.map((q) => q.retentionDays.done)),
    dead: Math.max(...deps.queues.map((q) => q.retentionDays.dead)),
  };
}

/**
 * A child job (`ctx.invoke`) ended: its parent, if it waits for exactly this child, resumes with the
 * child's outcome in its step, by resumeWaiting's one conditional write (docs/architecture.md §22),
 * then its message. Called by whoever saw the child end (its worker after the finalize, a duplicate
 * delivery that found it finished, the DLQ drain, a cancel) and by the parent's own suspend, which
 * looks once more after it landed: idempotent, the writes deciding. A parent that waits for another
 * child (`invokeMany`: one wait at a time) or still runs gets the outcome into the child's step
 * (recordChildOutcome), for its replay; one that ended is left alone. result: whether this call
 * resumed the parent.
 */
export async function childEnded(deps: DurableDeps, child: JobItem): Promise<boolean> {
  if (!child.parent || !isTerminal(child.status)) return false;
  const { j: id, q: queue, s: step } = child.parent;
  const json = await childOutcomeJson(deps, child);
  const now = deps.clock.now();
  // Kept as a step's result is while its job runs (the parent's suspend moves it if a wait needs more).
  const keepUntil = durableKeepUntil(now, now, retentionOf(deps, queue));
  const body = await stowDurable(deps.claims, { id, part: stepPart(step, `c${now}`) }, json, now, keepUntil);
  if (await resumeWaitingJob(deps, { id, queue }, { child: child.id, step }, body)) return true;
  // Not waiting for this child (an invokeMany's other child, or still running): its step keeps the end.
  await recordChildOutcome(deps.store, id, step, child.id, body);
  return false;
}
