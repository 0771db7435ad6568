import type { AddressInfo } from "node:net";
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ResourceInUseException,
} from "@aws-sdk/client-dynamodb";
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from "@aws-sdk/client-sqs";
import dynalite from "dynalite";
import { startFauxqs } from "fauxqs";
import { type QueueDeclaration, visibilityTimeoutSeconds } from "../lib/app/queue-declaration.ts";
import { createTableInput } from "../lib/store/table.ts";

/** Credentials and region for loopback emulators; nothing here ever reaches AWS. */
export const LOCAL_AWS = {
  region: "us-east-1",
  credentials: { accessKeyId: "local", secretAccessKey: "local" },
};

export interface RunningEmulator {
  endpoint: string;
  stop(): Promise<void>;
}

/** dynalite in this process, on 127.0.0.1 and a free port. */
export async function startDynalite(): Promise<RunningEmulator> {
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** fauxqs in this process, on 127.0.0.1 and a free port. */
export async function startSqsEmulator(): Promise<RunningEmulator> {
  const server = await startFauxqs({ port: 0, host: "127.0.0.1", logger: false });
  return { endpoint: `http://127.0.0.1:${server.port}`, stop: () => server.stop() };
}

export interface Emulators {
  dynamodb: RunningEmulator;
  sqs: RunningEmulator;
  stop(): Promise<void>;
}

/** Both emulators; if the second fails to start, the first is stopped again. */
export async function startEmulators(): Promise<Emulators> {
  const dynamodb = await startDynalite();
  let sqs: RunningEmulator;
  try {
    sqs = await startSqsEmulator();
  } catch (err) {
    await dynamodb.stop();
    throw err;
  }
  return {
    dynamodb,
    sqs,
    stop: async () => {
      await sqs.stop();
      await dynamodb.stop();
    },
  };
}

export function dynamoClient(endpoint: string): DynamoDBClient {
  return new DynamoDBClient({ ...LOCAL_AWS, endpoint, maxAttempts: 3 });
}

export function sqsClient(endpoint: string): SQSClient {
  return new SQSClient({ ...LOCAL_AWS, endpoint, maxAttempts: 3 });
}

/** Creates the jobs table from the shared declaration and waits until it is ACTIVE. */
export async function provisionTable(client: DynamoDBClient, table: string): Promise<void> {
  try {
    await client.send(new CreateTableCommand(createTableInput(table)));
  } catch (err) {
    if (!(err instanceof ResourceInUseException)) throw err;
  }
  for (let i = 0; i < 200; i++) {
    const out = await client.send(new DescribeTableCommand({ TableName: table }));
    if (out.Table?.TableStatus === "ACTIVE") return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`table ${table} did not become ACTIVE`);
}

export interface ProvisionedQueue {
  url: string;
  dlqUrl: string;
}

/**
 * Creates each declared queue and its DLQ with the same settings infra gives them (visibility 6x
 * the worker timeout, redrive at maxReceiveCount). `prefix` keeps parallel tests apart.
 */
export async function provisionQueues(
  client: SQSClient,
  declarations: readonly QueueDeclaration[],
  prefix = "skyforge",
  overrides: { visibilityTimeoutSeconds?: number } = {},
): Promise<Map<string, ProvisionedQueue>> {
  const result = new Map<string, ProvisionedQueue>();
  for (const q of declarations) {
    const dlq = await client.send(new CreateQueueCommand({ QueueName: `${prefix}-${q.name}-dlq` }));
    const dlqAttrs = await client.send(
      new GetQueueAttributesCommand({ QueueUrl: dlq.QueueUrl, AttributeNames: ["QueueArn"] }),
    );
    const main = await client.send(
      new CreateQueueCommand({
        QueueName: `${prefix}-${q.name}`,
        Attributes: {
          VisibilityTimeout: String(overrides.visibilityTimeoutSeconds ?? visibilityTimeoutSeconds(q)),
          RedrivePolicy: JSON.stringify({
            deadLetterTargetArn: dlqAttrs.Attributes?.QueueArn,
            maxReceiveCount: q.maxReceiveCount,
          }),
        },
      }),
    );
    result.set(q.name, { url: main.QueueUrl as string, dlqUrl: dlq.QueueUrl as string });
  }
  return result;
}
