import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ResourceInUseException,
  type TableDescription,
} from "@aws-sdk/client-dynamodb";
import { CreateBucketCommand, PutBucketLifecycleConfigurationCommand, S3Client } from "@aws-sdk/client-s3";
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  QueueNameExists,
  SetQueueAttributesCommand,
  SQSClient,
} from "@aws-sdk/client-sqs";
import { claimLifecycleRules } from "../lib/claims/claim-keys.ts";
import { type QueueDeclaration, visibilityTimeoutSeconds } from "../lib/declarations/queue-declaration.ts";
import { ConfigError } from "../lib/errors.ts";
import { QUEUE_MESSAGE_RETENTION_SECONDS } from "../lib/limits.ts";
import { createTableInput } from "../lib/store/table.ts";
import type { DataDir } from "./data-dir.ts";
import {
  LOCAL_AWS,
  LOOPBACK,
  type RunningEmulator,
  startDynalite,
  startSqsEmulator,
} from "./emulator-servers.ts";

// Where they have always been imported from; the servers themselves live in emulator-servers.ts.
export { LOCAL_AWS, LOOPBACK, type RunningEmulator, startDynalite, startSqsEmulator };

export interface Emulators {
  dynamodb: RunningEmulator;
  sqs: RunningEmulator;
  stop(): Promise<void>;
}

/**
 * Both emulators, each on loopback behind the request guard (local/emulator-guard.ts): they answer
 * only the SDK signing as LOCAL_AWS. If the second fails to start, the first is stopped again. With
 * a data directory (`openDataDir`), both keep their state there and find it again on the next start.
 */
export async function startEmulators(dataDir?: DataDir): Promise<Emulators> {
  const dynamodb = await startDynalite(dataDir ? { path: dataDir.dynamodb } : {});
  let sqs: RunningEmulator;
  try {
    sqs = await startSqsEmulator(dataDir ? { dataDir: dataDir.sqs } : {});
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

/** The local stack's claims bucket (lib/claims/), in the emulator's S3. */
export const CLAIMS_BUCKET = "skyforge-claims";

/** The emulator's S3 (fauxqs serves it on its SQS endpoint), addressed path-style: no DNS tricks. */
export function s3Client(endpoint: string): S3Client {
  return new S3Client({ ...LOCAL_AWS, endpoint, forcePathStyle: true, maxAttempts: 3 });
}

/**
 * The claims bucket with the lifecycle rules infra gives it (the emulator keeps them but expires
 * nothing, and has no bucket encryption to set). Idempotent: a kept data directory already has it.
 */
export async function provisionClaimsBucket(s3: S3Client, bucket: string): Promise<void> {
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  await s3.send(
    new PutBucketLifecycleConfigurationCommand({
      Bucket: bucket,
      LifecycleConfiguration: {
        Rules: claimLifecycleRules().map((r) => ({
          ID: r.id,
          Status: "Enabled",
          Filter: { Prefix: r.prefix },
          Expiration: { Days: r.expirationDays },
        })),
      },
    }),
  );
}

/**
 * Creates the jobs table from the shared declaration and waits until it is ACTIVE. A table that is
 * already there (a kept data directory) is used as it is, provided its keys and indexes are the ones
 * the code expects; a table of another shape is refused rather than half-used.
 */
export async function provisionTable(client: DynamoDBClient, table: string): Promise<void> {
  try {
    await client.send(new CreateTableCommand(createTableInput(table)));
  } catch (err) {
    if (!(err instanceof ResourceInUseException)) throw err;
  }
  for (let i = 0; i < 200; i++) {
    const out = await client.send(new DescribeTableCommand({ TableName: table }));
    if (out.Table?.TableStatus === "ACTIVE") {
      const found = tableShape(out.Table);
      const wanted = tableShape(createTableInput(table));
      if (found !== wanted)
        throw new ConfigError(
          `table ${table} exists with another shape (${found}; this code needs ${wanted}). Start from an empty data directory: npm start -- --fresh`,
        );
      return;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`table ${table} did not become ACTIVE`);
}

/** Keys and indexes, the part of a table the store relies on. */
function tableShape(t: Pick<TableDescription, "KeySchema" | "GlobalSecondaryIndexes">): string {
  const keys = (k: { AttributeName?: string; KeyType?: string }[] | undefined) =>
    (k ?? []).map((x) => `${x.AttributeName}:${x.KeyType}`).join(",");
  const indexes = (t.GlobalSecondaryIndexes ?? [])
    .map((i) => `${i.IndexName}(${keys(i.KeySchema)})`)
    .sort()
    .join(" ");
  return `keys ${keys(t.KeySchema)}; indexes ${indexes || "none"}`;
}

export interface ProvisionedQueue {
  url: string;
  dlqUrl: string;
}

/**
 * Creates each declared queue and its DLQ with the same settings infra gives them (visibility covering
 * the worker timeout, its batching window and an init; redrive at maxReceiveCount, 14 days' retention). `prefix` keeps parallel tests
 * apart. A queue that already exists (a kept data directory) gets the declared settings applied, so
 * a changed declaration takes effect on the next start and its messages stay.
 */
export async function provisionQueues(
  client: SQSClient,
  declarations: readonly QueueDeclaration[],
  prefix = "skyforge",
  overrides: { visibilityTimeoutSeconds?: number } = {},
): Promise<Map<string, ProvisionedQueue>> {
  const retention = { MessageRetentionPeriod: String(QUEUE_MESSAGE_RETENTION_SECONDS) };
  const result = new Map<string, ProvisionedQueue>();
  for (const q of declarations) {
    const dlqUrl = await ensureQueue(client, `${prefix}-${q.name}-dlq`, retention);
    const dlqAttrs = await client.send(
      new GetQueueAttributesCommand({ QueueUrl: dlqUrl, AttributeNames: ["QueueArn"] }),
    );
    const url = await ensureQueue(client, `${prefix}-${q.name}`, {
      ...retention,
      VisibilityTimeout: String(overrides.visibilityTimeoutSeconds ?? visibilityTimeoutSeconds(q)),
      RedrivePolicy: JSON.stringify({
        deadLetterTargetArn: dlqAttrs.Attributes?.QueueArn,
        maxReceiveCount: q.maxReceiveCount,
      }),
    });
    result.set(q.name, { url, dlqUrl });
  }
  return result;
}

/** CreateQueue, or, when the queue exists with other attributes, SetQueueAttributes on it (as on AWS). */
async function ensureQueue(
  client: SQSClient,
  name: string,
  attributes: Record<string, string>,
): Promise<string> {
  try {
    const created = await client.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
    return onClientEndpoint(client, created.QueueUrl as string);
  } catch (err) {
    // fauxqs names it in the query protocol's words, "AWS.SimpleQueueService.QueueNameExists".
    if (!(err instanceof QueueNameExists || (err as Error).name.endsWith(".QueueNameExists"))) throw err;
  }
  const { QueueUrl } = await client.send(new GetQueueUrlCommand({ QueueName: name }));
  await client.send(new SetQueueAttributesCommand({ QueueUrl, Attributes: attributes }));
  return onClientEndpoint(client, QueueUrl as string);
}

/**
 * The queue's URL on the emulator's own origin. fauxqs answers `http://sqs.<region>.127.0.0.1:<port>/…`,
 * which WHATWG URL parsing refuses (a host ending in a number must be an IPv4 address), so every SDK
 * client that derives its endpoint from the queue URL (the pool's) would warn on each call.
 */
async function onClientEndpoint(client: SQSClient, queueUrl: string): Promise<string> {
  const endpoint = await client.config.endpoint?.();
  if (!endpoint) return queueUrl;
  const port = endpoint.port ? `:${endpoint.port}` : "";
  return `${endpoint.protocol}//${endpoint.hostname}${port}${queueUrl.replace(/^[a-z]+:\/\/[^/]+/i, "")}`;
}
