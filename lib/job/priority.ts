import * as z from "zod";

/**
 * A job's priority (docs/guide/flow-control.md "Priorities"): an integer 1 (lowest) .. 5 (highest),
 * 3 when none is given. The two names of the first release stay accepted, and are stored as given:
 * "normal" is 3; "critical" is 5 and is also the pool's signal to grow a kind to its `hard` children
 * (docs/guide/pool.md), which a plain 5 is not: growing past `soft` costs money, so it stays opt-in.
 */
export const MIN_PRIORITY = 1;
export const MAX_PRIORITY = 5;
export const DEFAULT_PRIORITY = 3;

const PRIORITY_ERROR = `priority is an integer ${MIN_PRIORITY}..${MAX_PRIORITY} (or "normal", "critical")`;

const error = { error: PRIORITY_ERROR };
export const Priority = z.union(
  [z.int(error).min(MIN_PRIORITY, error).max(MAX_PRIORITY, error), z.enum(["normal", "critical"], error)],
  error,
);
export type Priority = z.infer<typeof Priority>;

/**
 * How much earlier a job waits in line for each level of priority above 3 (later for each below):
 * its place is its enqueue time minus (level - 3) x this. 30 s: a priority-5 job goes ahead of a
 * minute's arrivals of default work, which is most of a busy key's line when its runs take seconds;
 * and a priority-1 job is overtaken only by jobs enqueued at most 2 minutes after it (4 x step, by
 * priority-5 ones), so its wait stays within minutes of what first-come order would give it. A
 * larger step would let a flood of high-priority work hold low-priority work back for longer; a
 * smaller one would make a priority mean nothing in a line whose wait is above a few seconds.
 */
export const PRIORITY_STEP_MS = 30_000;

/** The level 1..5 of a priority as stored (absent, as in items before priorities: 3). */
export function priorityLevel(priority: Priority | undefined): number {
  if (priority === undefined || priority === "normal") return DEFAULT_PRIORITY;
  if (priority === "critical") return MAX_PRIORITY;
  return priority;
}

/** Whether the job asks the pool for its `hard` children: only the name "critical" does. */
export const isCritical = (priority: Priority | undefined): boolean => priority === "critical";

/**
 * The time a job of this priority enqueued at `createdAt` waits in line by (its virtual arrival):
 * a job is overtaken only by a job of priority q > p enqueued before createdAt + (q - p) x step, so
 * none starves. Never below 0 (a stored sort key has no sign).
 */
export function agedArrival(createdAt: number, priority: Priority | undefined): number {
  return Math.max(0, createdAt - (priorityLevel(priority) - DEFAULT_PRIORITY) * PRIORITY_STEP_MS);
}
