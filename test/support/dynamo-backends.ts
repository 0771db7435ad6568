import { inject } from "vitest";
import { dynamoClient, provisionTable, startDynalite } from "../../local/emulators.ts";
import { startDynamoDbLocal } from "./dynamodb-local.ts";

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
 * The run's shared DynamoDB Local when there is one: a JVM takes seconds of CPU to start, and every
 * test makes its own table, so files need no JVM of their own. Stopping it is the run's business.
 */
async function dynamoDbLocalBackend(): Promise<DynamoBackend> {
  const shared = inject("dynamodbLocalEndpoint");
  if (shared) return { name: "dynamodb-local", endpoint: shared, stop: async () => {} };
  return { name: "dynamodb-local", ...(await startDynamoDbLocal()) };
}

/** dynalite (in-process, pure JS) and Amazon's DynamoDB Local (Java child process). */
export const dynamoBackends: readonly BackendFactory[] = [
  { name: "dynalite", start: async () => ({ name: "dynalite", ...(await startDynalite()) }) },
  { name: "dynamodb-local", start: dynamoDbLocalBackend },
];

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
