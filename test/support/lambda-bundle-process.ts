import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import type { AwsService } from "./aws-call-recorder.ts";

const HOST = fileURLToPath(new URL("./lambda-bundle-host.mjs", import.meta.url));

/** The project's own Node 24 (the `node` devDependency), which npm scripts run on; else this process's. */
export function projectNode(root: string): string {
  const pinned = join(root, "node_modules", "node", "bin", "node");
  return existsSync(pinned) ? pinned : process.execPath;
}

export interface LambdaProcessOptions {
  node: string;
  /** The bundle's root, as deployed: Lambda's /var/task. */
  taskRoot: string;
  /** ".sst/skyforge/Jobs/worker.handler": the module under the task root and its export. */
  handler: string;
  functionName: string;
  runtime: string;
  memoryMb: number;
  timeoutSeconds: number;
  region: string;
  /** The environment infra gives the function. */
  environment: Record<string, string>;
  /** Where its SDK clients send each service's calls. */
  endpoints: Record<AwsService, string>;
  /** Bounds the init phase (the import of the bundle). */
  initTimeoutMs?: number;
}

export type Invocation =
  | { ok: true; payload: unknown }
  | { ok: false; error: { errorType: string; errorMessage: string } };

export interface LambdaProcess {
  nodeVersion: string;
  initMs: number;
  /** Invokes the handler once, bounded by the function's timeout (or `timeoutMs` when shorter). */
  invoke(event: unknown, timeoutMs?: number): Promise<Invocation>;
  /** What the function printed (stdout and stderr): its log. */
  log(): string;
  stop(): Promise<void>;
}

/**
 * What Lambda's environment holds for a function besides its own variables: the reserved names the
 * runtime sets, dummy credentials (as a role's session would provide them), and the endpoints this
 * test points each SDK client at. Nothing is inherited from the test's process.
 */
export function lambdaEnvironment(o: LambdaProcessOptions): Record<string, string> {
  return {
    _HANDLER: o.handler,
    LAMBDA_TASK_ROOT: o.taskRoot,
    AWS_EXECUTION_ENV: `AWS_Lambda_${o.runtime}`,
    AWS_REGION: o.region,
    AWS_DEFAULT_REGION: o.region,
    AWS_LAMBDA_FUNCTION_NAME: o.functionName,
    AWS_LAMBDA_FUNCTION_VERSION: "$LATEST",
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(o.memoryMb),
    AWS_LAMBDA_INITIALIZATION_TYPE: "on-demand",
    AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${o.functionName}`,
    AWS_LAMBDA_LOG_STREAM_NAME: "2025/01/01/[$LATEST]00000000000000000000000000000000",
    AWS_LAMBDA_LOG_FORMAT: "JSON",
    // The emulators answer this access key id only (LOCAL_AWS); a role's session has a token too.
    AWS_ACCESS_KEY_ID: "local",
    AWS_SECRET_ACCESS_KEY: "local",
    AWS_SESSION_TOKEN: "local",
    TZ: ":UTC",
    LANG: "en_US.UTF-8",
    AWS_ENDPOINT_URL_DYNAMODB: o.endpoints.dynamodb,
    AWS_ENDPOINT_URL_SQS: o.endpoints.sqs,
    AWS_ENDPOINT_URL_LAMBDA: o.endpoints.lambda,
    AWS_ENDPOINT_URL_S3: o.endpoints.s3,
    ...o.environment,
  };
}

/**
 * Starts a fresh Node process that loads the bundle as Lambda would (test/support/lambda-bundle-host.mjs)
 * and resolves once its init phase is over; an init that throws rejects with Lambda's error type.
 */
export async function startLambdaProcess(options: LambdaProcessOptions): Promise<LambdaProcess> {
  const child = spawn(options.node, [HOST], {
    cwd: options.taskRoot,
    env: lambdaEnvironment(options),
    stdio: ["pipe", "pipe", "pipe", "pipe"],
  });
  let log = "";
  child.stdout?.on("data", (d: Buffer) => {
    log += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    log += d.toString();
  });
  const exited = once(child, "exit");
  const pending = new Map<number, (answer: Invocation | Error) => void>();
  let onInit: ((message: HostMessage | Error) => void) | undefined;
  createInterface({ input: child.stdio[3] as Readable }).on("line", (line) => {
    const message = JSON.parse(line) as HostMessage;
    if (message.type === "init") onInit?.(message);
    else pending.get(message.id)?.(message.ok ? { ok: true, payload: JSON.parse(message.payload) } : message);
  });
  child.on("exit", (code, signal) => {
    const gone = new Error(`${options.functionName} exited (${signal ?? code}) ${tail(log)}`.trim());
    onInit?.(gone);
    for (const settle of pending.values()) settle(gone);
  });

  const init = await bounded<HostMessage>(
    (settle) => {
      onInit = settle;
    },
    options.initTimeoutMs ?? 15_000,
    `${options.functionName} to finish its init`,
  ).catch(async (err: unknown) => {
    await stopChild(child, exited);
    throw err;
  });
  onInit = undefined;
  if (init.type !== "init" || !init.ok) {
    await stopChild(child, exited);
    const error = init.type === "init" && !init.ok ? init.error : undefined;
    throw new Error(
      `${options.functionName} init failed: ${error?.errorType}: ${error?.errorMessage} ${tail(log)}`,
    );
  }

  let nextId = 0;
  return {
    nodeVersion: init.nodeVersion,
    initMs: init.initMs,
    log: () => log,
    async invoke(event, timeoutMs) {
      const id = nextId++;
      const limitMs = Math.min(timeoutMs ?? Number.POSITIVE_INFINITY, options.timeoutSeconds * 1000);
      const answer = bounded<Invocation>(
        (settle) => pending.set(id, settle),
        limitMs,
        `${options.functionName} to answer invocation ${id}`,
      ).finally(() => pending.delete(id));
      child.stdin?.write(
        `${JSON.stringify({ id, event, deadlineMs: Date.now() + options.timeoutSeconds * 1000 })}\n`,
      );
      return answer;
    },
    stop: () => stopChild(child, exited),
  };
}

type HostMessage =
  | { type: "init"; ok: true; nodeVersion: string; initMs: number }
  | { type: "init"; ok: false; error: { errorType: string; errorMessage: string } }
  | { type: "invoke"; id: number; ok: true; payload: string }
  | { type: "invoke"; id: number; ok: false; error: { errorType: string; errorMessage: string } };

/** Resolves with what `register`'s callback receives, rejects on an Error or after `ms`. */
function bounded<T>(
  register: (settle: (v: T | Error) => void) => void,
  ms: number,
  what: string,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms);
    register((v) => {
      clearTimeout(timer);
      if (v instanceof Error) reject(v);
      else resolve(v);
    });
  });
}

/** Closing stdin ends the host after its current invocation; a host that hangs is killed. */
async function stopChild(child: ChildProcess, exited: Promise<unknown>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.stdin?.end();
  const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
  await exited;
  clearTimeout(timer);
}

const tail = (log: string) => (log ? `; last output:\n${log.split("\n").slice(-15).join("\n")}` : "");
