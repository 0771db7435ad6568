import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LambdaClient } from "@aws-sdk/client-lambda";
import { dataDirHolder } from "../../local/data-dir.ts";
import { waitFor } from "./wait.ts";

export interface StackProcess {
  url: string;
  /** The `npm start` process, leader of its own process group (the stack, the pool and its children). */
  pid: number;
  output: () => string;
  /** Where this stack keeps its table and queues (SKYFORGE_DATA_DIR). */
  dataDir: string;
  /** Sends Ctrl-C and resolves once the stack has stopped. */
  interrupt(): Promise<void>;
  /** Sends `signal` to the whole process group (SIGKILL: a crash) and resolves once the stack has stopped. */
  kill(signal: NodeJS.Signals): Promise<void>;
}

/**
 * Starts `npm start` exactly as the README does (PORT=0 picks a free port) and waits for its banner;
 * `cwd` runs it in another copy of the project, `args` go to the script (`--fresh`). Unless `env`
 * names a SKYFORGE_DATA_DIR, the stack gets a data directory of its own, removed once it has exited,
 * so a test never touches the developer's `.skyforge/` nor another test's store.
 */
export async function startStackProcess(
  env: Record<string, string> = {},
  cwd?: string,
  args: readonly string[] = [],
): Promise<StackProcess> {
  const ownDataDir = env.SKYFORGE_DATA_DIR ? undefined : mkdtempSync(join(tmpdir(), "skyforge-data-"));
  const dataDir = env.SKYFORGE_DATA_DIR ?? (ownDataDir as string);
  const child: ChildProcess = spawn("npm", ["start", "--silent", ...(args.length ? ["--", ...args] : [])], {
    ...(cwd ? { cwd } : {}),
    env: { ...process.env, PORT: "0", SKYFORGE_DATA_DIR: dataDir, ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let out = "";
  child.stdout?.on("data", (d) => {
    out += d;
  });
  child.stderr?.on("data", (d) => {
    out += d;
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  // npm exits at the signal, while the stack's own process may still be stopping (draining the
  // pool): it has stopped once it lets go of its data directory (or died holding it).
  const stopped = exited.then(async () => {
    await waitFor(
      async () => dataDirHolder(dataDir) === undefined,
      "the stack to let go of its data",
      30_000,
    );
  });
  stopped.catch(() => {}); // awaited by interrupt() and kill(); a stray rejection is theirs to report
  if (ownDataDir)
    void stopped.finally(() => rmSync(ownDataDir, { recursive: true, force: true })).catch(() => {});
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`local stack did not start:\n${out}`)), 60_000);
    const onData = () => {
      const m = /HTTP API\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1] as string);
      }
    };
    child.stdout?.on("data", onData);
    child.once("exit", () => reject(new Error(`local stack exited early:\n${out}`)));
  });
  return {
    url,
    pid: child.pid as number,
    output: () => out,
    dataDir,
    interrupt: async () => {
      // npm runs the script in a child; signal the whole group like a terminal's Ctrl-C does.
      process.kill(-(child.pid as number), "SIGINT");
      return stopped;
    },
    kill: async (signal) => {
      process.kill(-(child.pid as number), signal);
      return stopped;
    },
  };
}

/** The SDK's Lambda client aimed at the local stack's Invoke API; one try per call, so a failure shows. */
export function localLambdaClient(url: string, region = "us-east-1"): LambdaClient {
  return new LambdaClient({
    endpoint: url,
    region,
    maxAttempts: 1,
    credentials: { accessKeyId: "local", secretAccessKey: "local" },
  });
}
