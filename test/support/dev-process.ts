import { type ChildProcess, spawn } from "node:child_process";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { projectRoot } from "./project-copy.ts";
import { deferred, withinMs } from "./wait.ts";

export interface DevProcess {
  /** The process, leader of its own group (the stack and its pool). */
  pid: number;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first match of `pattern` in stdout (stderr with `stream`) after `from`, within `boundMs`. */
  untilOutput(
    pattern: RegExp,
    options?: { from?: number; stream?: "stdout" | "stderr"; boundMs?: number },
  ): Promise<RegExpExecArray>;
  /** The exit code, once it has exited. */
  exited: Promise<number | null>;
  /** Ctrl-C to the group; resolves with the exit code. */
  interrupt(): Promise<number | null>;
}

/**
 * `runDev(argv)` (local/dev-command.ts) in a process of its own, working in `cwd` (a user's project),
 * as the installed `skyforge dev` runs it: this repo's sources under tsx, found by absolute path, so
 * the project needs nothing of the repo.
 */
export function startDevProcess(
  cwd: string,
  argv: readonly string[],
  env: Record<string, string>,
): DevProcess {
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
  const entry = pathToFileURL(join(projectRoot, "local/dev-command.ts")).href;
  // The pool child runs this repo's pool entry from source, as npm start does.
  const pool = {
    command: [process.execPath, "--import", tsx, join(projectRoot, "functions/pool/dev-main.ts")],
    env: { TSX_TSCONFIG_PATH: join(projectRoot, "tsconfig.json") },
  };
  const script = `import { runDev } from ${JSON.stringify(entry)}; process.exit(await runDev(process.argv.slice(1), { pool: ${JSON.stringify(pool)} }));`;
  const child: ChildProcess = spawn(
    process.execPath,
    ["--import", tsx, "--input-type=module", "-e", script, "--", ...argv],
    {
      cwd,
      env: { ...process.env, TSX_TSCONFIG_PATH: join(projectRoot, "tsconfig.json"), ...env },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    },
  );
  const out = { stdout: "", stderr: "" };
  const waiters = new Set<() => void>();
  for (const stream of ["stdout", "stderr"] as const) {
    child[stream]?.on("data", (d) => {
      out[stream] += d;
      for (const check of waiters) check();
    });
  }
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return {
    pid: child.pid as number,
    stdout: () => out.stdout,
    stderr: () => out.stderr,
    untilOutput(pattern, { from = 0, stream = "stdout", boundMs = 20_000 } = {}) {
      const found = deferred<RegExpExecArray>();
      const check = () => {
        const match = new RegExp(pattern.source, pattern.flags.replace("g", "")).exec(
          out[stream].slice(from),
        );
        if (match) found.resolve(match);
      };
      waiters.add(check);
      check();
      void exited.then(() =>
        found.reject(new Error(`exited before ${pattern}:\n${out.stdout}\n${out.stderr}`)),
      );
      return withinMs(found.promise, `${pattern} in ${stream}:\n${out[stream]}`, boundMs).finally(() =>
        waiters.delete(check),
      );
    },
    exited,
    interrupt: async () => {
      try {
        process.kill(-(child.pid as number), "SIGINT");
      } catch {
        // already gone
      }
      return exited;
    },
  };
}
