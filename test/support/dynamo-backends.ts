import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { afterAll, beforeAll, inject } from "vitest";
import { dynamoClient, provisionTable, startDynalite } from "../../local/emulators.ts";

/** One running DynamoDB emulator the conformance suite can point real SDK clients at. */
export interface DynamoBackend {
  name: string;
  endpoint: string;
  stop(): Promise<void>;
}

export interface BackendFactory {
  name: string;
  start(): Promise<DynamoBackend>;
}

declare module "vitest" {
  export interface ProvidedContext {
    /** The run's shared DynamoDB Local, when the project started one (see dynamodb-local-setup.ts). */
    dynamodbLocalEndpoint?: string;
  }
}

/**
 * The run's shared DynamoDB Local (the store project's global setup starts it): a JVM takes seconds
 * of CPU to start, and on a busy machine more than half a minute, and every test makes its own
 * table, so no file starts a JVM of its own. Stopping it is the run's business.
 */
async function dynamoDbLocalBackend(): Promise<DynamoBackend> {
  const shared = inject("dynamodbLocalEndpoint");
  if (!shared)
    throw new Error(
      "no shared DynamoDB Local: a file that runs on both DynamoDB emulators belongs in vitest.config.ts's STORE_FILES",
    );
  return { name: "dynamodb-local", endpoint: shared, stop: async () => {} };
}

/** dynalite (in-process, pure JS) and Amazon's DynamoDB Local (Java child process). */
export const dynamoBackends: readonly BackendFactory[] = [
  { name: "dynalite", start: async () => ({ name: "dynalite", ...(await startDynalite()) }) },
  { name: "dynamodb-local", start: dynamoDbLocalBackend },
];

/**
 * A client on `factory`'s emulator for the whole describe block: the emulator starts (or the run's
 * shared one is reached) before its first test; the client and the emulator stop after its last.
 * `watch` sees the client first, for a middleware that records what the tests send.
 */
export function clientOn(
  factory: BackendFactory,
  watch?: (client: DynamoDBClient) => void,
): () => DynamoDBClient {
  let backend: DynamoBackend | undefined;
  let client: DynamoDBClient | undefined;
  beforeAll(async () => {
    backend = await factory.start();
    client = dynamoClient(backend.endpoint);
    watch?.(client);
  });
  afterAll(async () => {
    client?.destroy();
    await backend?.stop();
  });
  return () => {
    if (!client)
      throw new Error(`${factory.name} is started in beforeAll: ask for its client inside a test or hook`);
    return client;
  };
}

let tableCounter = 0;

/** A table name no other test (in this process or another worker) uses. */
export function uniqueTableName(prefix = "jobs"): string {
  tableCounter += 1;
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${tableCounter}`;
}

/** Creates a fresh jobs table (from the shared declaration) on a backend and returns its name. */
export async function freshTable(client: ReturnType<typeof dynamoClient>, prefix?: string): Promise<string> {
  const table = uniqueTableName(prefix);
  await provisionTable(client, table);
  return table;
}

export { dynamoClient };
