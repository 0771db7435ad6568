import { spawnSync } from "node:child_process";
import { accessSync, constants } from "node:fs";

/**
 * `npm test`'s prerequisites (README, "Two commands"), checked once before any file runs: a vitest
 * globalSetup of every project (vitest.config.ts). A missing one fails the run at once with one line
 * each, what it is for and how to install it, instead of a timeout deep inside some test.
 */

/** What the machine has, as the checks see it; a test passes its own. */
export interface Machine {
  /** `java -version`'s output (it writes to stderr), or undefined when there is no java. */
  javaVersion: () => string | undefined;
  chromiumPath: string;
  isExecutable: (path: string) => boolean;
  /** Whether `program --version` starts and exits 0. */
  runs: (program: string) => boolean;
  uid: number | undefined;
}

export const DEFAULT_CHROMIUM = "/usr/bin/chromium";

/** 17 from `openjdk version "17.0.15"`, 8 from `java version "1.8.0_292"`; undefined if unreadable. */
export function javaMajor(versionOutput: string): number | undefined {
  const m = /version "(\d+)(?:\.(\d+))?/.exec(versionOutput);
  if (!m) return undefined;
  const first = Number(m[1]);
  return first === 1 && m[2] !== undefined ? Number(m[2]) : first;
}

/** One line per missing prerequisite (empty: all there), each naming what needs it and how to get it. */
export function missingPrerequisites(machine: Machine): string[] {
  const missing: string[] = [];
  const java = machine.javaVersion();
  const major = java === undefined ? undefined : javaMajor(java);
  if (major === undefined || major < 17)
    missing.push(
      `Java 17+ for DynamoDB Local (the store suite)${java === undefined ? ": no java on PATH" : `: found ${major === undefined ? "an unreadable version" : `Java ${major}`}`}; install: apt-get install openjdk-17-jre-headless`,
    );
  if (!machine.isExecutable(machine.chromiumPath))
    missing.push(
      `chromium for the console's browser test: none at ${machine.chromiumPath}; install: apt-get install chromium, or set CHROMIUM_PATH to a Chromium`,
    );
  if (!machine.runs("python3"))
    missing.push(
      "python3 on PATH for the Python demo child (the py-digest pool kind); install: apt-get install python3",
    );
  if (!machine.runs("setpriv"))
    missing.push(
      "setpriv for the pool's children, each run as a user of its own; install: apt-get install util-linux",
    );
  if (!machine.runs("flock"))
    missing.push(
      "flock for the package tests' turns at building packages/*/dist (test/support/packages-dist-lock.ts); install: apt-get install util-linux",
    );
  if (machine.uid !== 0)
    missing.push(
      `root: the pool tests switch each child to a user of its own (setpriv --reuid), which only root may; running as uid ${machine.uid ?? "unknown"}; run npm test as root (a container or VM of its own)`,
    );
  return missing;
}

export function thisMachine(env: Readonly<Record<string, string | undefined>>): Machine {
  return {
    javaVersion: () => {
      const r = spawnSync("java", ["-version"], { encoding: "utf8" });
      return r.error ? undefined : `${r.stderr ?? ""}${r.stdout ?? ""}`;
    },
    chromiumPath: env.CHROMIUM_PATH || DEFAULT_CHROMIUM,
    isExecutable: (path) => {
      try {
        accessSync(path, constants.X_OK);
        return true;
      } catch {
        return false;
      }
    },
    runs: (program) => spawnSync(program, ["--version"], { stdio: "ignore" }).status === 0,
    uid: process.getuid?.(),
  };
}

// Every project runs this setup in the one vitest process: check the machine once.
const CHECKED = Symbol.for("skyforge.test.prerequisites");

export default function setup(): void {
  const state = globalThis as { [CHECKED]?: string[] };
  state[CHECKED] ??= missingPrerequisites(thisMachine(process.env));
  const missing = state[CHECKED];
  if (missing.length === 0) return;
  const err = new Error(
    `npm test needs ${missing.length === 1 ? "one thing" : `${missing.length} things`} this machine lacks (README, "Two commands"):\n${missing.map((m) => `  - ${m}`).join("\n")}`,
  );
  // The lines are the whole story: no stack or code frame of this file after them.
  err.stack = err.message;
  throw err;
}
