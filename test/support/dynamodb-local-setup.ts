import type { TestProject } from "vitest/node";
import { startDynamoDbLocal } from "./dynamodb-local.ts";

/**
 * Global setup of the store project: one DynamoDB Local for all its files (each test makes its own
 * table), instead of a JVM per file starting at once on a busy machine.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dynamodbLocal = await startDynamoDbLocal();
  project.provide("dynamodbLocalEndpoint", dynamodbLocal.endpoint);
  return () => dynamodbLocal.stop();
}
