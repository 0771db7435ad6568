import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, expect } from "vitest";
import { app } from "../../app/index.ts";
import { tickingStackForFile } from "./stack-for-file.ts";
import { type Json, stackHttp } from "./stack-http.ts";

/** The launcher `npx skyforge` runs. */
export const skyforgeBin = fileURLToPath(new URL("../../bin/skyforge.mjs", import.meta.url));

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliProcess {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the exit code once the process has closed its output. */
  exited: Promise<number | null>;
  /** `exited`, failing if that takes longer than `timeoutMs`. */
  exit(timeoutMs?: number): Promise<number | null>;
  /**
   * Ctrl-C as a terminal sends it (`group`: the launcher and the CLI, its own process group), or as
   * `kill -INT <pid>` does (the launcher alone, which forwards it).
   */
  interrupt(how: "group" | "pid"): void;
  /** Kills what is left of it (SIGKILL to its group), so a failed test leaves no process behind. */
  kill(): void;
}

export interface CliOptions {
  /** The Node that runs the launcher (npx uses the PATH's); default this test's own. */
  node?: string;
  env?: Record<string, string>;
  /** Written to its stdin, then closed. */
  input?: string;
}

/**
 * `node bin/skyforge.mjs …` as an operator runs it: in `cwd`, with SKYFORGE_ENDPOINT pointing at the
 * stack, output collected.
 */
export function skyforgeCli(endpoint: () => string, cwd: string) {
  function start(args: readonly string[], options: CliOptions = {}): CliProcess {
    const child = spawn(options.node ?? process.execPath, [skyforgeBin, ...args], {
      cwd,
      env: { ...process.env, SKYFORGE_ENDPOINT: endpoint(), ...options.env },
      stdio: [options.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
      // Its own process group, as a command typed at a terminal: Ctrl-C reaches the whole group.
      detached: true,
    });
    if (options.input !== undefined) child.stdin?.end(options.input);
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (d) => {
      stdout += d;
    });
    child.stderr?.on("data", (d) => {
      stderr += d;
    });
    let closed = false;
    const exited = new Promise<number | null>((resolve) =>
      child.once("close", (code) => {
        closed = true;
        resolve(code);
      }),
    );
    const pid = child.pid as number;
    return {
      child,
      stdout: () => stdout,
      stderr: () => stderr,
      exited,
      exit: (timeoutMs = 15_000) =>
        Promise.race([
          exited,
          new Promise<never>((_, reject) =>
            setTimeout(() => reject(new Error(`skyforge ${args.join(" ")} did not exit`)), timeoutMs).unref(),
          ),
        ]),
      interrupt: (how) => process.kill(how === "group" ? -pid : pid, "SIGINT"),
      kill: () => {
        if (closed) return;
        try {
          process.kill(-pid, "SIGKILL");
        } catch {
          // already gone
        }
      },
    };
  }

  async function run(args: readonly string[], options: CliOptions = {}): Promise<CliRun> {
    const p = start(args, options);
    const code = await p.exited;
    return { code, stdout: p.stdout(), stderr: p.stderr() };
  }

  /**
   * The one JSON document a `--json` command prints, after checking it exited `code`: its answer on
   * stdout (exit 0, or 1 for a bulk enqueue with failed lines), or its error on stderr.
   */
  async function json(args: readonly string[], code = 0): Promise<Json> {
    const r = await run([...args, "--json"]);
    expect(r.code, `skyforge ${args.join(" ")}\n${r.stderr}`).toBe(code);
    return JSON.parse(code <= 1 ? r.stdout : r.stderr) as Json;
  }

  function writeLines(name: string, lines: readonly string[]): string {
    const file = join(cwd, name);
    writeFileSync(file, `${lines.join("\n")}\n`);
    return file;
  }

  return { start, run, json, writeLines };
}

/**
 * One local stack and one scratch folder (named from `prefix`) for a whole test file, stopped and
 * removed afterwards: the CLI runs in the folder against the stack, and `call` reaches its HTTP API.
 * The stack is the one `npm start` runs (local/stack.ts over app/, ticking every minute as it does),
 * started in this process: what is under test is the CLI, a process of its own.
 */
export function useCliOnStack(prefix: string) {
  const work = mkdtempSync(join(tmpdir(), prefix));
  const stack = tickingStackForFile({ app, tickSeconds: 60 });
  afterAll(() => rmSync(work, { recursive: true, force: true }));
  const url = () => stack().url;
  return { work, ...stackHttp(url), cli: skyforgeCli(url, work) };
}

/** A loopback port nothing listens on. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
