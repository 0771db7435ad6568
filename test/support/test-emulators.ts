import { randomBytes } from "node:crypto";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { S3Client } from "@aws-sdk/client-s3";
import type { SQSClient } from "@aws-sdk/client-sqs";
import type { QueueDeclaration } from "../../lib/declarations/queue-declaration.ts";
import {
  type Emulators,
  type ProvisionedQueue,
  provisionClaimsBucket,
  provisionQueues,
  provisionTable,
  startEmulators,
} from "../../local/emulators.ts";
import { emulatorClients } from "../../local/stack.ts";
import { forFile } from "./for-file.ts";

/**
 * The one place the test harnesses (engine, pool, Lambda bundles) start the emulators and carve
 * out what a test writes to. Tests on the same emulators stay apart by unique names, never by
 * emulators of their own.
 */

/** The emulators for the whole file: started before its first test, stopped after its last. */
export function emulatorsForFile(): () => Emulators {
  return forFile("the emulators", startEmulators, (emu) => emu.stop());
}

/** The names a test's resources start with, so a leftover says which harness made it. */
export interface ResourceNames {
  /** The table is `${table}-${suffix}`. */
  table: string;
  /** Each queue is `${queues}${suffix}-${name}` (and its DLQ, `…-dlq`). */
  queues: string;
  /** The claims bucket is `${bucket}-${suffix}`. */
  bucket: string;
}

/** A table, claims bucket and queues no other test uses, with the clients that reach them. */
export interface FreshResources {
  dynamodb: DynamoDBClient;
  sqs: SQSClient;
  s3: S3Client;
  table: string;
  claimsBucket: string;
  queues: Map<string, ProvisionedQueue>;
  /** Destroys the three clients (the resources stay: the emulators go with the file). */
  destroy(): void;
}

/** Provisions `declarations` as infra would (and a table and bucket) under fresh, unique names. */
export async function freshResources(
  emu: Emulators,
  declarations: readonly QueueDeclaration[],
  names: ResourceNames,
  overrides: {
    visibilityTimeoutSeconds?: number;
    /** This bucket instead of a fresh one: a pool process only knows the local stack's (CLAIMS_BUCKET). */
    claimsBucket?: string;
  } = {},
): Promise<FreshResources> {
  const suffix = randomBytes(4).toString("hex");
  const { dynamodb, sqs, s3 } = emulatorClients(emu);
  const destroy = () => {
    dynamodb.destroy();
    sqs.destroy();
    s3.destroy();
  };
  try {
    const table = `${names.table}-${suffix}`;
    await provisionTable(dynamodb, table);
    const claimsBucket = overrides.claimsBucket ?? `${names.bucket}-${suffix}`;
    await provisionClaimsBucket(s3, claimsBucket);
    const queues = await provisionQueues(sqs, declarations, `${names.queues}${suffix}`, overrides);
    return { dynamodb, sqs, s3, table, claimsBucket, queues, destroy };
  } catch (err) {
    destroy();
    throw err;
  }
}

/** What an engine needs of fresh resources: the clients, the table, the bucket and every queue's URLs. */
export function engineWiring(fresh: FreshResources) {
  const { dynamodb, sqs, s3, claimsBucket, table } = fresh;
  const queues = [...fresh.queues];
  return {
    dynamodb,
    sqs,
    s3,
    claimsBucket,
    table,
    queueUrls: new Map(queues.map(([name, q]) => [name, q.url])),
    dlqUrls: new Map(queues.map(([name, q]) => [name, q.dlqUrl])),
  };
}
