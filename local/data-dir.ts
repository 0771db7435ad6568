import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError } from "../lib/errors.ts";
import { isRunning } from "./process-running.ts";

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
  privateDir(root);
  const lock = lockFile(root);
  const deadline = Date.now() + (options.waitMs ?? 0);
  while (!tryLock(root)) {
    const holder = dataDirHolder(root);
    if (holder === undefined) {
      takeOverStale(lock);
      continue;
    }
    // Two stacks on one store would corrupt it.
    if (Date.now() >= deadline)
      throw new ConfigError(
        `${root} is in use by another local stack (pid ${holder}); stop it first, or give this one its own SKYFORGE_DATA_DIR`,
      );
    await new Promise((r) => setTimeout(r, 100));
  }
  const dir = { root, dynamodb: join(root, "dynamodb"), sqs: join(root, "sqs") };
  if (options.fresh)
    for (const store of [dir.dynamodb, dir.sqs]) rmSync(store, { recursive: true, force: true });
  privateDir(dir.sqs);
  return {
    ...dir,
    release: () => {
      heldHere.delete(root);
      if (readIfPresent(lock) === String(process.pid)) rmSync(lock, { force: true });
    },
  };
}

/**
 * The stores hold every job's payload and result: the directory is its owner's alone (0700), made
 * so, and an existing one (from an older version, or a folder SKYFORGE_DATA_DIR names) made so too,
 * whatever the umask, so no other local user can read it.
 */
const PRIVATE_DIR_MODE = 0o700;
function privateDir(path: string): void {
  mkdirSync(path, { recursive: true, mode: PRIVATE_DIR_MODE });
  chmodSync(path, PRIVATE_DIR_MODE);
}

/** Data directories this process holds: a lock naming our pid that we did not take is a dead namesake's. */
const heldHere = new Set<string>();

/** Creates the lock only if there is none (one atomic create: of two starters, one wins). */
function tryLock(root: string): boolean {
  try {
    writeFileSync(lockFile(root), String(process.pid), { flag: "wx" });
    heldHere.add(root);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw err;
  }
}

/**
 * Moves a stale lock out of the way by an atomic rename, so of two starters taking it over only one
 * moves it; if what was moved is a fresh lock another starter made meanwhile, it is put back.
 */
function takeOverStale(lock: string): void {
  const stale = readIfPresent(lock);
  const grave = `${lock}.${process.pid}.stale`;
  try {
    renameSync(lock, grave);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
    throw err;
  }
  const moved = readIfPresent(grave);
  rmSync(grave, { force: true });
  if (moved !== undefined && moved !== stale) {
    try {
      writeFileSync(lock, moved, { flag: "wx" });
    } catch (err) {
      // Someone holds it again already: theirs stands. Anything else is a real failure.
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
  }
}

/**
 * The live process holding the data directory, if any: this one too when it holds it (one stack per
 * directory), but not a dead stack whose pid this process happens to have been given again.
 */
export function dataDirHolder(root: string): number | undefined {
  const holder = Number.parseInt(readIfPresent(lockFile(root)) ?? "", 10);
  if (!Number.isInteger(holder)) return undefined;
  if (holder === process.pid) return heldHere.has(root) ? holder : undefined;
  return isRunning(holder) ? holder : undefined;
}

const lockFile = (root: string) => join(root, "stack.pid");

function readIfPresent(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8").trim();
  } catch (err) {
    // Only a missing file is "absent"; an unreadable one must not pass for a free data directory.
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
}
