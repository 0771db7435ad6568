import { readFileSync } from "node:fs";

/**
 * True while `pid` runs. A zombie (ended, not yet reaped by its parent) counts as gone: it holds
 * nothing and runs nothing any more. A process of another user (EPERM) still counts as running.
 */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
  if (process.platform !== "linux") return true;
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return false; // gone since the signal
  }
  // "pid (comm) state …": the state follows the last ")".
  const state = stat[stat.lastIndexOf(")") + 2];
  return state !== "Z" && state !== "X";
}
