import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";

/** Running things as an unprivileged user (nobody), as a container's `USER` would, from a root test. */

export const UNPRIVILEGED = 65534;
/** Runs the rest of an argv as uid/gid 65534, no groups; it dies if the test process does. */
export const AS_UNPRIVILEGED = [
  "setpriv",
  `--reuid=${UNPRIVILEGED}`,
  `--regid=${UNPRIVILEGED}`,
  "--clear-groups",
  "--pdeathsig",
  "KILL",
  "--",
];
/** Runs `argv` as the unprivileged user; its exit status and output. */
export function asUnprivileged(argv: readonly string[], env: Record<string, string> = {}) {
  const [program, ...args] = [...AS_UNPRIVILEGED, ...argv];
  const r = spawnSync(program as string, args, { env: { PATH: "/usr/bin:/bin", ...env }, encoding: "utf8" });
  return { ok: r.status === 0, out: `${r.stdout ?? ""}${r.stderr ?? ""}`.trim() };
}

/**
 * A python3 the unprivileged user can run, with the modules digest.py needs: the first on PATH, then
 * the system's. (A pyenv shim under /root is on root's PATH and unreadable to anyone else.)
 */
export function pythonForUnprivileged(): { dir: string; version: string } {
  const dirs = [...(process.env.PATH ?? "").split(":"), "/usr/local/bin", "/usr/bin", "/bin"];
  for (const dir of dirs.filter(Boolean)) {
    const probe = asUnprivileged([join(dir, "python3"), "-c", "import hashlib, json, platform, threading"]);
    if (!probe.ok) continue;
    const version = asUnprivileged([
      join(dir, "python3"),
      "-c",
      "import platform; print(platform.python_version())",
    ]);
    return { dir, version: version.out };
  }
  throw new Error(
    `no python3 that uid ${UNPRIVILEGED} can run in ${dirs.join(", ")}: the py-digest kind can't be served`,
  );
}

/** The real uid a process runs as. */
export function uidOf(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").match(/^Uid:\s+(\d+)/m);
  return Number(line?.[1]);
}
