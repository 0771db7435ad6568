import type { AttemptView } from "../job/schemas.ts";
import type { JobStatus } from "../job/status.ts";

/**
 * A job's attempt history (docs/architecture.md §4): one compact record per ended run, kept on the
 * job item itself so that no attempt costs a write of its own. The claim records the current run's
 * start and runner on the item (`startedAt`, `runner`); the write that ends the run appends its
 * record here; the view builds the current run's entry from the item's own fields. A job that
 * succeeds at its first attempt never gets a list.
 *
 * Records are keyed by their start time, not their attempt number: a run that gives its attempt back
 * (throttled, released at shutdown, a durable suspend) leaves a record with the same number as the
 * run after it.
 */
export interface AttemptRecord {
  /** The attempt number the run counted as. */
  a: number;
  /** Started, ended (epoch ms). */
  s: number;
  e: number;
  o: AttemptOutcome;
  /** Why it ended, when not a success (shortened: the latest full error is the job's lastError). */
  x?: string;
  /** Who ran it. */
  r?: string;
}

/** How a run ended: a finalize outcome, or "lapsed" when its lease ran out without an end. */
export const attemptOutcomes = [
  "done",
  "retry",
  "reschedule",
  "throttled",
  "released",
  "suspend",
  "dead",
  "cancelled",
  "paused",
  "lapsed",
] as const;
export type AttemptOutcome = (typeof attemptOutcomes)[number];

/** Records kept per job: older ones are dropped and counted, so the item stays small (WCU per KB). */
export const HISTORY_KEEP = 10;
/** An error's length in a record: ten of them must fit the item's budget beside everything else. */
export const HISTORY_ERROR_CHARS = 160;

/** What a run's record and the history it joins take from the job item (lib/store/job-item.ts). */
export interface HistoryFields {
  attempts: number;
  startedAt?: number;
  runner?: string;
  history?: AttemptRecord[];
  historyDropped?: number;
}

/** What a lapsed run's reason takes from the item: its start, its lease's end, its platform's limit. */
export interface LapseFields {
  startedAt?: number;
  leaseUntil?: number;
  runDeadline?: number;
}

/** One ended run, from the item as its claim left it. */
export function endedRun(
  item: HistoryFields,
  outcome: AttemptOutcome,
  endedAt: number,
  error?: string,
): AttemptRecord | undefined {
  if (item.startedAt === undefined) return undefined;
  return {
    a: item.attempts,
    s: item.startedAt,
    e: endedAt,
    o: outcome,
    ...(error ? { x: error.slice(0, HISTORY_ERROR_CHARS) } : {}),
    ...(item.runner ? { r: item.runner } : {}),
  };
}

/** The history with `record` appended, the oldest dropped past HISTORY_KEEP (and counted). */
export function withRecord(
  item: HistoryFields,
  record: AttemptRecord,
): Pick<HistoryFields, "history" | "historyDropped"> {
  const all = [...(item.history ?? []), record];
  const dropped = Math.max(0, all.length - HISTORY_KEEP);
  return {
    history: all.slice(dropped),
    ...(dropped + (item.historyDropped ?? 0) > 0
      ? { historyDropped: dropped + (item.historyDropped ?? 0) }
      : {}),
  };
}

/**
 * Why a run whose lease lapsed without an end stopped, as precisely as the store can know it. A
 * worker's lease is renewed until its process stops, so the lapse is last heartbeat + lease. When the
 * run recorded its platform's hard limit (`runDeadline`: a Lambda's timeout) and its lease outlasted
 * that limit, the process was alive up to within a lease of it: the platform stopped it there. Any
 * other stop (a crash, an out-of-memory kill, a frozen process, a pool task gone) looks the same from
 * here: only the platform's logs tell them apart (docs/architecture.md §21).
 */
export function lapseReason(previous: LapseFields): string {
  const start = previous.startedAt ?? previous.leaseUntil ?? 0;
  const seconds = Math.max(0, Math.round(((previous.leaseUntil ?? start) - start) / 1000));
  const lapsed = `lease lapsed after ${seconds} s without an end`;
  if (previous.runDeadline !== undefined && (previous.leaseUntil ?? 0) >= previous.runDeadline) {
    const limit = Math.round((previous.runDeadline - start) / 1000);
    return `timeout: ${lapsed} (the worker reached its time limit, ${limit} s after the start)`;
  }
  return `${lapsed} (the worker stopped: crash, out of memory or a frozen process)`;
}

/** The record a takeover writes for the run it takes over, ended when its lease did. */
export function lapsedRun(previous: HistoryFields & LapseFields): AttemptRecord {
  const start = previous.startedAt ?? previous.leaseUntil ?? 0;
  return {
    a: previous.attempts,
    s: start,
    e: previous.leaseUntil ?? start,
    o: "lapsed",
    x: lapseReason(previous),
    ...(previous.runner ? { r: previous.runner } : {}),
  };
}

type ViewFields = HistoryFields & { status: JobStatus; finishedAt?: number };

const iso = (ms: number) => new Date(ms).toISOString();

function viewOf(r: AttemptRecord): AttemptView {
  return {
    attempt: r.a,
    startedAt: iso(r.s),
    endedAt: iso(r.e),
    outcome: r.o,
    ...(r.x !== undefined ? { error: r.x } : {}),
    ...(r.r !== undefined ? { runner: r.r } : {}),
  };
}

/** The run the item's own fields describe, when no record holds it yet: running, or a first success. */
function currentRun(item: ViewFields): AttemptView | undefined {
  if (item.startedAt === undefined) return undefined;
  if (item.history?.some((r) => r.s === item.startedAt)) return undefined;
  const runner = item.runner !== undefined ? { runner: item.runner } : {};
  if (item.status === "running")
    return { attempt: item.attempts, startedAt: iso(item.startedAt), outcome: "running", ...runner };
  if (item.status !== "done") return undefined;
  return {
    attempt: item.attempts,
    startedAt: iso(item.startedAt),
    ...(item.finishedAt !== undefined ? { endedAt: iso(item.finishedAt) } : {}),
    outcome: "done",
    ...runner,
  };
}

/** Every attempt the item knows of, oldest first; absent for a job that never started. */
export function historyView(item: ViewFields): { history?: AttemptView[]; historyDropped?: number } {
  const views = (item.history ?? []).map(viewOf);
  const current = currentRun(item);
  if (current) views.push(current);
  return {
    ...(views.length ? { history: views } : {}),
    ...(item.historyDropped ? { historyDropped: item.historyDropped } : {}),
  };
}
