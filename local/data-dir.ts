import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError } from "../lib/errors.ts";

/** Where the emulators keep their state, held by one local stack at a time. */
export interface DataDir {
  root: string;
  /** dynalite's LevelDB store. */
  dynamodb: string;
  /** fauxqs's SQLite store. */
  sqs: string;
  release(): void;
}

/**
 * Takes a data directory for one local stack: a lock file with this process's pid (a stale one, left
 * by a killed stack, is taken over; a live one is waited for up to `waitMs`, since a stack stopped a
 * moment ago may still be draining), then, with `fresh`, the emulators' stores are removed. Only the
 * two store folders are ever deleted, so a data directory pointed at a folder of yours loses nothing
 * else.
 */
export async function openDataDir(
  root: string,
  options: { fresh?: boolean; waitMs?: number } = {},
): Promise<DataDir> {
  mkdirSync(root, { recursive: true });
  const deadline = Date.now() + (options.waitMs ?? 0);
  for (let holder = dataDirHolder(root); holder !== undefined; holder = dataDirHolder(root)) {
    // Two stacks on one store would corrupt it.
    if (Date.now() >= deadline)
      throw new ConfigError(
        `${root} is in use by another local stack (pid ${holder}); stop it first, or give this one its own SKYFORGE_DATA_DIR`,
      );
    await new Promise((r) => setTimeout(r, 100));
  }
  const lock = lockFile(root);
  writeFileSync(lock, String(process.pid));
  const dir = { root, dynamodb: join(root, "dynamodb"), sqs: join(root, "sqs") };
  if (options.fresh)
    for (const store of [dir.dynamodb, dir.sqs]) rmSync(store, { recursive: true, force: true });
  mkdirSync(dir.sqs, { recursive: true });
  return {
    ...dir,
    release: () => {
      if (readIfPresent(lock) === String(process.pid)) rmSync(lock, { force: true });
    },
  };
}

/** The live process holding the data directory, if any (this one too: one stack per directory). */
export function dataDirHolder(root: string): number | undefined {
  const holder = Number.parseInt(readIfPresent(lockFile(root)) ?? "", 10);
  return Number.isInteger(holder) && isAlive(holder) ? holder : undefined;
}

const lockFile = (root: string) => join(root, "stack.pid");

function readIfPresent(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8").trim();
  } catch {
    return undefined;
  }
}

/** True while `pid` runs. A zombie (killed, not yet reaped by its parent) holds nothing any more. */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    // EPERM: it exists, under another user.
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
  if (process.platform !== "linux") return true;
  // "pid (comm) state …": the state follows the last ")".
  const stat = readIfPresent(`/proc/${pid}/stat`);
  return stat !== undefined && stat[stat.lastIndexOf(")") + 2] !== "Z";
}
