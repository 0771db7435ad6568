import { existsSync, readFileSync } from "node:fs";

/** One line the observer (kind or child) appended. */
export interface ObserverLine {
  event: "start" | "end";
  jobId: string;
  attempt: number;
  pid: number;
  at: number;
  tier: "lambda" | "pool";
  /** On "end": "ok" when the run succeeded; otherwise why it stopped ("aborted:cancelled", "orphaned"…). */
  outcome?: string;
}

/** One run of a job, from its start line to its end line or, without one, to its process's death. */
export interface Run {
  jobId: string;
  attempt: number;
  pid: number;
  tier: "lambda" | "pool";
  start: number;
  /** undefined: no end line and the process is not known to be dead (still running, or lost). */
  end: number | undefined;
  /** The end line's outcome, or "killed" when the end is the process's death. */
  outcome: string;
}

/** Every complete line of the log so far (a line being written right now is left for the next read). */
export function readObserverLog(path: string): ObserverLine[] {
  if (!existsSync(path)) return [];
  const text = readFileSync(path, "utf8");
  const complete = text.slice(0, text.lastIndexOf("\n") + 1);
  return complete
    .split("\n")
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as ObserverLine);
}

/**
 * Pairs each start line with the next end line of the same job, attempt and process (a process runs
 * one job's attempt at most once at a time). A start without an end ends at its process's death.
 */
export function runsFrom(lines: readonly ObserverLine[], deaths: ReadonlyMap<number, number>): Run[] {
  const open = new Map<string, Run>();
  const runs: Run[] = [];
  for (const line of lines) {
    const key = `${line.jobId}/${line.attempt}/${line.pid}`;
    if (line.event === "start") {
      const run: Run = {
        jobId: line.jobId,
        attempt: line.attempt,
        pid: line.pid,
        tier: line.tier,
        start: line.at,
        end: undefined,
        outcome: "running",
      };
      open.set(key, run);
      runs.push(run);
    } else {
      const run = open.get(key);
      if (!run) throw new Error(`observer log: an end line without its start: ${JSON.stringify(line)}`);
      open.delete(key);
      run.end = line.at;
      run.outcome = line.outcome ?? "unknown";
    }
  }
  for (const run of open.values()) {
    const death = deaths.get(run.pid);
    if (death !== undefined) {
      run.end = death;
      run.outcome = "killed";
    }
  }
  return runs;
}

/** The runs by job id. */
export function runsByJob(runs: readonly Run[]): Map<string, Run[]> {
  const byJob = new Map<string, Run[]>();
  for (const run of runs) byJob.set(run.jobId, [...(byJob.get(run.jobId) ?? []), run]);
  return byJob;
}
