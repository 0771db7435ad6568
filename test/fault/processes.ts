import { readdirSync, readFileSync } from "node:fs";
import { isRunning } from "../../local/process-running.ts";

/** One live process as /proc shows it. */
export interface ProcessInfo {
  pid: number;
  ppid: number;
  pgid: number;
  /** R, S, T (stopped), Z (zombie: dead, not yet reaped)… */
  state: string;
  args: string;
}

function readProcess(pid: number): ProcessInfo | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // "pid (comm) state ppid pgrp …": comm may hold spaces and parentheses, so split after the last ")".
    const [state, ppid, pgid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
    return { pid, ppid: Number(ppid), pgid: Number(pgid), state: state as string, args };
  } catch {
    return undefined; // gone between the listing and the read
  }
}

/**
 * Every live process of a stack started as its own process group: the group itself, and any
 * descendant of its leader that moved to a group of its own (a pool may put its children there).
 */
export function stackProcesses(leader: number): ProcessInfo[] {
  const all = readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .map((name) => readProcess(Number(name)))
    .filter((p): p is ProcessInfo => p !== undefined && p.state !== "Z");
  const ours = new Set(all.filter((p) => p.pgid === leader || p.pid === leader).map((p) => p.pid));
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of all) {
      if (!ours.has(p.pid) && ours.has(p.ppid)) {
        ours.add(p.pid);
        grew = true;
      }
    }
  }
  return all.filter((p) => ours.has(p.pid));
}

/** Sends `signal` to each pid, ignoring those already gone. */
export function signalEach(pids: readonly number[], signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}

/**
 * Records when watched processes die, polling /proc every few ms: a run that never wrote its end
 * line lasted until then. The recorded time is an upper bound of the death, so an overlap check
 * built on it can only be stricter than the truth.
 */
export class DeathWatch {
  readonly deaths = new Map<number, number>();
  private readonly watched = new Set<number>();
  private timer: NodeJS.Timeout | undefined;

  watch(pids: Iterable<number>): void {
    for (const pid of pids) if (!this.deaths.has(pid)) this.watched.add(pid);
    this.timer ??= setInterval(() => this.poll(), 10);
  }

  private poll(): void {
    const now = Date.now();
    for (const pid of this.watched) {
      if (isRunning(pid)) continue;
      this.deaths.set(pid, now);
      this.watched.delete(pid);
    }
    if (this.watched.size === 0) this.close();
  }

  /** The pids still alive among those watched. */
  get pending(): number[] {
    return [...this.watched];
  }

  close(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
