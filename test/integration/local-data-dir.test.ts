import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect, createServer, type Server } from "node:net";
import { networkInterfaces, tmpdir } from "node:os";
import { join } from "node:path";
import { CreateTableCommand, type DynamoDBClient, ListTablesCommand } from "@aws-sdk/client-dynamodb";
import {
  ChangeMessageVisibilityCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigError } from "../../lib/errors.ts";
import { QUEUE_MESSAGE_RETENTION_SECONDS } from "../../lib/limits.ts";
import { createStoreContext } from "../../lib/store/context.ts";
import { openDataDir } from "../../local/data-dir.ts";
import {
  dynamoClient,
  provisionQueues,
  provisionTable,
  sqsClient,
  startEmulators,
} from "../../local/emulators.ts";
import { startLocalStack } from "../../local/stack.ts";
import { ManualClock } from "../support/clock.ts";
import { defaultQueue, testApp } from "../support/test-app.ts";

/**
 * The local stack's emulators: loopback only, and with a data directory, state that survives a
 * restart (docs/architecture.md §1, README "Local state"). The process-level restart, SIGKILL
 * included, is test/e2e/restart.test.ts.
 */
const dirs: string[] = [];
const scratch = () => {
  const dir = mkdtempSync(join(tmpdir(), "skyforge-datadir-"));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Resolves true when a TCP connection to host:port is accepted. */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.setTimeout(2000);
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
    socket.once("timeout", () => {
      socket.destroy();
      resolve(false);
    });
  });
}

/** This machine's addresses that are not loopback, plus 127.0.0.2 where all of 127/8 is local (Linux). */
function otherAddresses(): string[] {
  const external = Object.values(networkInterfaces())
    .flat()
    .filter((a) => a !== undefined && a.family === "IPv4" && !a.internal)
    .map((a) => a?.address as string);
  return [...external, ...(process.platform === "linux" ? ["127.0.0.2"] : [])];
}

const portOf = (endpoint: string) => Number(new URL(endpoint).port);

describe("the local stack listens on loopback only", () => {
  it("dynalite, fauxqs and the HTTP server answer on 127.0.0.1 and nowhere else", async () => {
    const others = otherAddresses();
    expect(others.length, "a non-loopback address to probe").toBeGreaterThan(0);
    const stack = await startLocalStack({ app: testApp(), port: 0, autoTick: false });
    try {
      for (const endpoint of [stack.url, stack.endpoints.dynamodb, stack.endpoints.sqs]) {
        expect(new URL(endpoint).hostname).toBe("127.0.0.1");
        expect(await accepts("127.0.0.1", portOf(endpoint)), endpoint).toBe(true);
        for (const address of others)
          expect(await accepts(address, portOf(endpoint)), `${endpoint} on ${address}`).toBe(false);
      }
    } finally {
      await stack.stop();
    }
  });

  it("narrows no listen but fauxqs's: afterwards a server that asks for every interface gets them", async () => {
    const emulators = await startEmulators();
    const server: Server = createServer();
    try {
      await new Promise<void>((resolve) => server.listen(0, resolve));
      const address = server.address();
      expect(typeof address === "object" && address?.address).toMatch(/^(::|0\.0\.0\.0)$/);
    } finally {
      await new Promise((resolve) => server.close(resolve));
      await emulators.stop();
    }
  });
});

describe("a data directory keeps the table and the queues across a restart", () => {
  /**
   * One run of the emulators on the data directory at `root`: `use` gets clients on them; then the
   * clients go, the emulators stop and the directory is released, however `use` ends.
   */
  async function onDataDir<T>(
    root: string,
    use: (c: { dynamodb: DynamoDBClient; sqs: SQSClient }) => Promise<T>,
    options: { fresh?: boolean } = {},
  ): Promise<T> {
    const dir = await openDataDir(root, options);
    const emulators = await startEmulators(dir);
    const c = { dynamodb: dynamoClient(emulators.dynamodb.endpoint), sqs: sqsClient(emulators.sqs.endpoint) };
    try {
      return await use(c);
    } finally {
      c.dynamodb.destroy();
      c.sqs.destroy();
      await emulators.stop();
      dir.release();
    }
  }

  it("finds items, messages and queue settings again, and provisioning on it is idempotent", async () => {
    const root = scratch();
    await onDataDir(root, async (c) => {
      await provisionTable(c.dynamodb, "jobs");
      const queues = await provisionQueues(c.sqs, [defaultQueue], "keep");
      const store = createStoreContext(c.dynamodb, "jobs", new ManualClock());
      await store.doc.send(
        new PutCommand({ TableName: "jobs", Item: { pk: "job#1", sk: "job", status: "queued" } }),
      );
      await c.sqs.send(new SendMessageCommand({ QueueUrl: queues.get("default")?.url, MessageBody: "kept" }));
    });

    await onDataDir(root, async (c) => {
      // Same declarations: nothing to change. Then a changed one (a shorter visibility): applied.
      await provisionTable(c.dynamodb, "jobs");
      await provisionQueues(c.sqs, [defaultQueue], "keep");
      const queues = await provisionQueues(c.sqs, [defaultQueue], "keep", { visibilityTimeoutSeconds: 7 });
      const restored = createStoreContext(c.dynamodb, "jobs", new ManualClock());
      const item = await restored.doc.send(
        new GetCommand({ TableName: "jobs", Key: { pk: "job#1", sk: "job" } }),
      );
      expect(item.Item).toMatchObject({ status: "queued" });
      const url = queues.get("default")?.url as string;
      const attrs = await c.sqs.send(
        new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["All"] }),
      );
      expect(attrs.Attributes).toMatchObject({
        VisibilityTimeout: "7",
        MessageRetentionPeriod: String(QUEUE_MESSAGE_RETENTION_SECONDS),
      });
      expect(JSON.parse(attrs.Attributes?.RedrivePolicy ?? "{}")).toMatchObject({
        maxReceiveCount: defaultQueue.maxReceiveCount,
      });
      const dlqAttrs = await c.sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: queues.get("default")?.dlqUrl,
          AttributeNames: ["MessageRetentionPeriod"],
        }),
      );
      expect(dlqAttrs.Attributes?.MessageRetentionPeriod).toBe(String(QUEUE_MESSAGE_RETENTION_SECONDS));
      const received = await c.sqs.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 1 }));
      expect(received.Messages?.map((m) => m.Body)).toEqual(["kept"]);
    });
  });

  it("a message made visible again (a pause's hand-back, a released job) stays visible, and keeps its receive count", async () => {
    const root = scratch();
    const receiveOne = async (sqs: SQSClient, url: string) => {
      const out = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: url,
          WaitTimeSeconds: 1,
          MessageSystemAttributeNames: ["All"],
        }),
      );
      expect(out.Messages).toHaveLength(1);
      return out.Messages?.[0] as Message;
    };
    const url = await onDataDir(root, async (c) => {
      const url = (await provisionQueues(c.sqs, [defaultQueue], "again")).get("default")?.url as string;
      await c.sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "again" }));
      for (const count of ["1", "2"]) {
        const m = await receiveOne(c.sqs, url);
        expect(m.Attributes?.ApproximateReceiveCount).toBe(count);
        await c.sqs.send(
          new ChangeMessageVisibilityCommand({
            QueueUrl: url,
            ReceiptHandle: m.ReceiptHandle,
            VisibilityTimeout: 0,
          }),
        );
      }
      return url;
    });

    await onDataDir(root, async (c) => {
      expect((await receiveOne(c.sqs, url)).Attributes?.ApproximateReceiveCount).toBe("3");
    });
  });

  it("--fresh empties the emulators' stores and nothing else in the directory", async () => {
    const root = scratch();
    await onDataDir(root, (c) => provisionTable(c.dynamodb, "jobs"));
    writeFileSync(join(root, "notes.txt"), "mine");

    await onDataDir(
      root,
      async (c) => {
        expect((await c.dynamodb.send(new ListTablesCommand({}))).TableNames).toEqual([]);
        expect(existsSync(join(root, "notes.txt"))).toBe(true);
      },
      { fresh: true },
    );
  });

  it("refuses a directory a live stack holds, and takes over one a killed stack left", async () => {
    const root = scratch();
    const other = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], { stdio: "ignore" });
    try {
      writeFileSync(join(root, "stack.pid"), String(other.pid));
      await expect(openDataDir(root)).rejects.toThrow(ConfigError);
      // A stack that is still stopping is waited for, a while.
      const started = Date.now();
      await expect(openDataDir(root, { waitMs: 300 })).rejects.toThrow(
        new RegExp(`in use by another local stack \\(pid ${other.pid}\\)`),
      );
      expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    } finally {
      other.kill("SIGKILL");
      await new Promise((resolve) => other.once("exit", resolve));
    }
    // Its holder is gone (SIGKILL skips any cleanup): the lock is stale.
    const taken = await openDataDir(root);
    taken.release();
    expect(existsSync(join(root, "stack.pid"))).toBe(false);
  });

  it("of two stacks opening one directory at once, exactly one gets it", async () => {
    const root = scratch();
    const results = await Promise.allSettled([openDataDir(root), openDataDir(root)]);
    const won = results.filter((r) => r.status === "fulfilled");
    expect(won).toHaveLength(1);
    expect(
      results.filter((r) => r.status === "rejected").map((r) => (r as PromiseRejectedResult).reason),
    ).toEqual([expect.any(ConfigError)]);
    (won[0] as PromiseFulfilledResult<Awaited<ReturnType<typeof openDataDir>>>).value.release();
  });

  it("a lock naming this process's own pid, which it never took, is a dead namesake's: taken over at once", async () => {
    // In a container a restarted stack is often given the pid the killed one had.
    const root = scratch();
    writeFileSync(join(root, "stack.pid"), String(process.pid));
    const taken = await openDataDir(root);
    await expect(openDataDir(root)).rejects.toThrow(ConfigError);
    taken.release();
    expect(existsSync(join(root, "stack.pid"))).toBe(false);
  });

  it("refuses a kept table of another shape, naming the way out", async () => {
    const emulators = await startEmulators();
    const c = dynamoClient(emulators.dynamodb.endpoint);
    try {
      await c.send(
        new CreateTableCommand({
          TableName: "old",
          BillingMode: "PAY_PER_REQUEST",
          AttributeDefinitions: [
            { AttributeName: "pk", AttributeType: "S" },
            { AttributeName: "sk", AttributeType: "S" },
          ],
          KeySchema: [
            { AttributeName: "pk", KeyType: "HASH" },
            { AttributeName: "sk", KeyType: "RANGE" },
          ],
        }),
      );
      await expect(provisionTable(c, "old")).rejects.toThrow(/another shape.*indexes none.*--fresh/);
    } finally {
      c.destroy();
      await emulators.stop();
    }
  });
});
