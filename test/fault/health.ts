import { expect } from "vitest";
import { type Run, runsByJob, runsFrom } from "./observer-log.ts";
import type { FaultStack, Json } from "./support.ts";

export interface HealthOptions {
  /** The jobs' lease: none may sit without a run, unfinished, for longer than 2 × this after the fault. */
  leaseMs: number;
  /** When the fault ended (the thaw, the restart, the pool back, the last cancel answered…). */
  faultEndedAt: number;
  /** The statuses a job may end in; "done" unless the scenario cancels. */
  terminal?: readonly string[];
  /** How long the jobs get to reach a terminal status. */
  timeoutMs?: number;
  /**
   * By when a whole-stack kill had landed (its last process seen dead): a run whose handler
   * succeeded before then may have had no time to write its end, so its job runs again (at least
   * once, by design). Such a run doesn't count against "exactly one successful run" when the job's
   * own history says the store never recorded its end.
   */
  killLandedBy?: number;
}

/** One entry of GET /jobs/{id}'s attempt history, as far as the fault suite reads it. */
interface HistoryEntry {
  attempt: number;
  outcome: string;
}

/**
 * A job's successful runs that count against "exactly one". A success that ended before a
 * whole-stack kill whose attempt the job's history shows "lapsed" (the kill came between the
 * handler's return and its finalize: the store took the lease back, no end was ever written) is
 * followed by another run by design, and the run after it is the one that counts. The store's own
 * record decides, not a guess at how long a finalize takes on a loaded machine.
 */
export function countedSuccesses(
  jobRuns: readonly Run[],
  view: Json,
  killLandedBy: number | undefined,
): Run[] {
  const history: HistoryEntry[] = view.history ?? [];
  const lapsed = (attempt: number) =>
    history.some((h) => h.attempt === attempt && h.outcome === "lapsed") &&
    !history.some((h) => h.attempt === attempt && h.outcome === "done");
  const succeeded = jobRuns.filter((r) => r.outcome === "ok");
  const endNeverWritten = (r: Run) =>
    killLandedBy !== undefined && r.end !== undefined && r.end <= killLandedBy && lapsed(r.attempt);
  return succeeded.filter((r, i) => !(i < succeeded.length - 1 && endNeverWritten(r)));
}

export interface HealthFigures {
  jobs: number;
  runs: number;
  /** Runs beyond the first of each job. */
  reruns: number;
  statuses: Record<string, number>;
  /** The longest time after the fault that an unfinished job had no run. */
  maxIdleAfterFaultMs: number;
  /** From the fault's end until the last job was seen terminal. */
  settledAfterFaultMs: number;
}

const TERMINAL = ["done", "dead", "cancelled"];

/** Polls GET /jobs/{id} until every job is terminal; each job's view and when it was first seen terminal. */
async function untilTerminal(stack: FaultStack, ids: readonly string[], timeoutMs: number) {
  const seen = new Map<string, { view: Json; at: number }>();
  const deadline = Date.now() + timeoutMs;
  let last = new Map<string, string>();
  while (seen.size < ids.length && Date.now() < deadline) {
    const pending = ids.filter((id) => !seen.has(id));
    const answers = await Promise.all(pending.map((id) => stack.call("GET", `/jobs/${id}`)));
    last = new Map();
    answers.forEach((r, i) => {
      const id = pending[i] as string;
      const status = r.status === 200 ? (r.body.status as string) : `HTTP ${r.status}`;
      if (TERMINAL.includes(status)) seen.set(id, { view: r.body, at: Date.now() });
      else last.set(id, status);
    });
    if (seen.size < ids.length) await new Promise((r) => setTimeout(r, 100));
  }
  return { seen, unfinished: last };
}

/** The longest stretch of [from, to] that no run of the job covers. */
function longestIdle(runs: readonly Run[], from: number, to: number): number {
  let longest = 0;
  let cursor = from;
  for (const run of [...runs].sort((a, b) => a.start - b.start)) {
    const end = run.end ?? Number.POSITIVE_INFINITY;
    if (end <= cursor) continue;
    if (run.start >= to) break;
    longest = Math.max(longest, Math.min(run.start, to) - cursor);
    cursor = Math.max(cursor, end);
  }
  return Math.max(longest, to - cursor);
}

const describeRun = (r: Run) =>
  `attempt ${r.attempt} pid ${r.pid} ${new Date(r.start).toISOString()}..${r.end ? new Date(r.end).toISOString() : "?"} ${r.outcome}`;

/**
 * The four properties of issue 12, for every job: none is lost (each reaches a terminal status);
 * none is stuck without a run for over 2 × its lease after the fault ends; no two runs of one job
 * overlap in time; a done job has exactly one run that ended in success, on the attempt the job
 * records, and a cancelled one has none. Every problem is listed, with the runs as evidence.
 */
export async function assertHealthy(
  stack: FaultStack,
  ids: readonly string[],
  options: HealthOptions,
): Promise<HealthFigures> {
  const allowed = options.terminal ?? ["done"];
  const timeoutMs = options.timeoutMs ?? 30_000;
  const { seen, unfinished } = await untilTerminal(stack, ids, timeoutMs);
  const problems: string[] = [];

  const runs = runsFrom(stack.observerLog(), stack.deaths);
  const byJob = runsByJob(runs);
  const statuses: Record<string, number> = {};
  let maxIdle = 0;
  for (const id of ids) {
    const jobRuns = byJob.get(id) ?? [];
    const evidence = () => jobRuns.map(describeRun).join("; ");
    for (const r of jobRuns.filter((r) => r.end === undefined))
      problems.push(`job ${id}: a run never ended and its process ${r.pid} is not dead (${evidence()})`);
    const sorted = [...jobRuns].sort((a, b) => a.start - b.start);
    for (let i = 1; i < sorted.length; i++) {
      const before = sorted.slice(0, i).reduce((m, r) => Math.max(m, r.end ?? Number.POSITIVE_INFINITY), 0);
      const next = sorted[i] as Run;
      if (next.start < before)
        problems.push(`job ${id}: runs overlap by ${before - next.start} ms (${evidence()})`);
    }

    const terminal = seen.get(id);
    if (!terminal) {
      const what = unfinished.get(id)?.startsWith("HTTP 404") ? "lost" : "stuck";
      problems.push(
        `${what}: job ${id} is ${unfinished.get(id)} ${timeoutMs} ms on (runs: ${evidence() || "none"})`,
      );
      continue;
    }
    const { view } = terminal;
    statuses[view.status] = (statuses[view.status] ?? 0) + 1;
    if (!allowed.includes(view.status))
      problems.push(
        `job ${id} ended ${view.status} (${view.lastError ?? ""}); expected ${allowed.join(" or ")}`,
      );
    const counted = countedSuccesses(jobRuns, view, options.killLandedBy);
    const wanted = view.status === "done" ? 1 : 0;
    if (counted.length !== wanted)
      problems.push(
        `job ${id} is ${view.status} with ${counted.length} successful runs, expected ${wanted} (${evidence()}; history ${JSON.stringify(view.history ?? [])})`,
      );
    const success = counted.at(-1);
    if (view.status === "done" && success && success.attempt !== view.attempts)
      problems.push(
        `job ${id}: done at attempts ${view.attempts}, but its run succeeded on attempt ${success.attempt}`,
      );
    const beyond = jobRuns.filter((r) => r.attempt > view.attempts);
    if (beyond.length > 0)
      problems.push(`job ${id}: runs beyond its ${view.attempts} attempts (${evidence()})`);

    const endedAt = view.status === "done" && success?.end !== undefined ? success.end : terminal.at;
    const idle = endedAt > options.faultEndedAt ? longestIdle(jobRuns, options.faultEndedAt, endedAt) : 0;
    maxIdle = Math.max(maxIdle, idle);
    if (idle > 2 * options.leaseMs)
      problems.push(`job ${id}: no run for ${idle} ms after the fault, over 2 × lease (${evidence()})`);
  }

  const settled = Math.max(options.faultEndedAt, ...[...seen.values()].map((s) => s.at));
  const ran = ids.filter((id) => byJob.has(id)).length;
  const runCount = runs.filter((r) => ids.includes(r.jobId)).length;
  const figures: HealthFigures = {
    jobs: ids.length,
    runs: runCount,
    reruns: runCount - ran,
    statuses,
    maxIdleAfterFaultMs: maxIdle,
    settledAfterFaultMs: settled - options.faultEndedAt,
  };
  expect(problems, JSON.stringify(figures)).toEqual([]);
  return figures;
}
