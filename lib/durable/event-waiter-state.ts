import { isTerminal } from "../job/status.ts";
import type { JobItem } from "../store/job-item.ts";
import { eventPairOf } from "../store/step-record.ts";

/**
 * What an event's waiter (a pointer to a job's wait, docs/architecture.md §22) is worth, judged from
 * its job as one read found it: whether a resume of it can win, and whether it can never resume
 * anything again. Pure.
 */

/**
 * The job waits for this event, at this step, now: scheduled, its `waiting` on the pair, and the
 * step's entry of that pair still without data (or, in a race, the race's entry with a branch on
 * the pair, no winner yet, and the pair among its `waiting.pairs`). A resume of it can win (unless something else
 * moves the job first).
 */
export function waitsForEvent(
  job: JobItem | undefined,
  event: string,
  match: string,
  step: string,
): job is JobItem {
  if (job?.status !== "scheduled") return false;
  const w = job.waiting;
  if (w?.for === "any") {
    const race = job.steps?.[step];
    const branch = race?.race?.some((b) => b.event === event && b.match === match);
    return branch === true && race?.w === undefined && (w.pairs ?? []).includes(eventPairOf(event, match));
  }
  if (w?.for !== "event" || w.event !== event || w.match !== match) return false;
  const entry = job.steps?.[step];
  return entry?.event === event && entry.match === match && entry.v === undefined && entry.o === undefined;
}

/**
 * Whether the pointer can never resume its job: the job is gone, or ended (a retry of it runs again
 * and writes its own pointer), or the wait's step has its data (resumed) or its timeout has passed
 * (a step's wait is never waited again). A job that has not recorded the step yet (it writes the
 * pointer before its suspend), or one that was moved on before its timeout and will wait again,
 * keeps it.
 */
export function waiterIsStale(job: JobItem | undefined, step: string, now: number): boolean {
  if (!job || isTerminal(job.status)) return true;
  const entry = job.steps?.[step];
  if (!entry) return false;
  if (entry.v !== undefined || entry.o !== undefined || entry.w !== undefined) return true;
  return entry.until !== undefined && entry.until <= now;
}
