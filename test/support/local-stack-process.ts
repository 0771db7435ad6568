import { type ChildProcess, spawn } from "node:child_process";

export interface StackProcess {
  url: string;
  output: () => string;
  /** Sends Ctrl-C and resolves once the process has exited. */
  interrupt(): Promise<void>;
}

/**
 * Starts `npm start` exactly as the README does (PORT=0 picks a free port) and waits for its banner;
 * `cwd` runs it in another copy of the project.
 */
export async function startStackProcess(
  env: Record<string, string> = {},
  cwd?: string,
): Promise<StackProcess> {
  const child: ChildProcess = spawn("npm", ["start", "--silent"], {
    ...(cwd ? { cwd } : {}),
    env: { ...process.env, PORT: "0", ...env },
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
    output: () => out,
    interrupt: async () => {
      // npm runs the script in a child; signal the whole group like a terminal's Ctrl-C does.
      process.kill(-(child.pid as number), "SIGINT");
      return exited;
    },
  };
}
