import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { projectRoot } from "./project-copy.ts";
import { withinMs } from "./wait.ts";

/**
 * The test files that build and pack this repo's packages into their packages/<name>/dist folders
 * (README blocks run as written) run beside the rest of the suite, but their build-and-pack steps
 * one at a time: a build empties the dist/ folder another file may be packing.
 *
 * The lock is the kernel's (flock(1), util-linux, as setpriv), held by a child process until the step
 * ends: if the test process dies, the child's stdin closes and the lock goes with it, so no run can
 * leave a stale one. One lock per checkout: another worktree's dist/ folders are its own.
 */
const LOCK_PATH = join(
  tmpdir(),
  `skyforge-packages-dist-${createHash("sha256").update(projectRoot).digest("hex").slice(0, 12)}.lock`,
);

/** Runs `step` (a build and pack of this repo's packages) while no other file runs one. */
export async function withPackagesDistLock<T>(step: () => Promise<T>, boundMs = 600_000): Promise<T> {
  const holder = spawn("flock", ["--exclusive", LOCK_PATH, "sh", "-c", "echo held; exec cat >/dev/null"], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const exited = new Promise<number | null>((resolve) => holder.once("exit", resolve));
  let held = false;
  try {
    await withinMs(
      new Promise<void>((resolve, reject) => {
        holder.stdout?.on("data", (d) => {
          if (!String(d).includes("held")) return;
          held = true;
          resolve();
        });
        holder.once("error", reject);
        void exited.then((code) => reject(new Error(`flock exited ${code} before taking ${LOCK_PATH}`)));
      }),
      `hold of ${LOCK_PATH} (another file's build and pack of the packages)`,
      boundMs,
    );
    return await step();
  } finally {
    // Held: its cat ends at the end of its input, and the lock with it. Still waiting: stopped.
    holder.stdin?.end();
    if (!held) holder.kill();
    await exited;
  }
}
