import { accessSync, constants, statSync } from "node:fs";
import { delimiter, isAbsolute, join, resolve } from "node:path";
import type { PoolKindSpec } from "../declarations/pool-kind.ts";

/**
 * Where a child's program is found, the way spawning it would find it: a name with a slash is a
 * path (relative to the child's cwd), a bare name is looked up on PATH. undefined: nowhere, or not
 * an executable file.
 */
export function findProgram(
  program: string,
  where: { cwd: string; path: string | undefined },
): string | undefined {
  if (program.includes("/")) {
    const file = isAbsolute(program) ? program : resolve(where.cwd, program);
    return isExecutableFile(file) ? file : undefined;
  }
  for (const dir of (where.path ?? "").split(delimiter)) {
    if (!dir) continue;
    const file = join(resolve(where.cwd, dir), program);
    if (isExecutableFile(file)) return file;
  }
  return undefined;
}

function isExecutableFile(file: string): boolean {
  try {
    if (!statSync(file).isFile()) return false;
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The pool kinds whose program can't be started, each with a sentence naming the kind and the
 * program: the pool refuses them at start rather than failing each of their jobs, attempt after
 * attempt, until it dies.
 */
export function unlaunchableKinds(
  kinds: readonly PoolKindSpec[],
  baseEnv: Readonly<Record<string, string | undefined>>,
  defaultCwd: string,
): Map<string, string> {
  const refused = new Map<string, string>();
  for (const spec of kinds) {
    const program = spec.argv[0];
    const cwd = resolve(defaultCwd, spec.cwd ?? ".");
    const path = spec.env.PATH ?? baseEnv.PATH;
    if (!program) {
      refused.set(spec.name, `pool kind "${spec.name}": its argv is empty`);
    } else if (!findProgram(program, { cwd, path })) {
      const where = program.includes("/") ? `relative to ${cwd}` : "on PATH";
      refused.set(
        spec.name,
        `pool kind "${spec.name}": its program ${JSON.stringify(program)} was not found ${where} (or is not executable)`,
      );
    }
  }
  return refused;
}

/** util-linux's setpriv on `path`, on Linux; undefined where it is missing. */
export function findSetpriv(platform: NodeJS.Platform, path: string | undefined): string | undefined {
  return platform === "linux" ? findProgram("setpriv", { cwd: "/", path }) : undefined;
}

/**
 * The argv prefix that has the kernel kill a child the moment the process that started it dies,
 * even by SIGKILL: util-linux's `setpriv --pdeathsig KILL` (Linux; Debian and node:24-slim have
 * it), which sets the signal and then execs the program, so the child keeps its pid. [] where it
 * is missing: the pool then stops its children itself when it exits or is stopped, and a child
 * finds its parent gone (stdin closed, parent pid changed), which only a well-behaved child heeds.
 */
export function dieWithParentPrefix(platform: NodeJS.Platform, path: string | undefined): string[] {
  const setpriv = findSetpriv(platform, path);
  return setpriv ? [setpriv, "--pdeathsig", "KILL", "--"] : [];
}

/**
 * The argv prefix that runs a child as `uid` (and gid `uid`, no supplementary groups), with no
 * capability left in any set, no way to gain one back (no new privileges: setuid binaries and file
 * capabilities give nothing), and the parent-death signal, which setpriv sets after switching, so
 * the switch doesn't clear it. Another uid than the pool's and its siblings': the kernel then
 * refuses the child /proc/<pid>/environ and /proc/<pid>/mem of those processes.
 */
export function asChildUserPrefix(setpriv: string, uid: number): string[] {
  return [
    setpriv,
    `--reuid=${uid}`,
    `--regid=${uid}`,
    "--clear-groups",
    "--no-new-privs",
    "--inh-caps=-all",
    "--bounding-set=-all",
    "--pdeathsig",
    "KILL",
    "--",
  ];
}
