import { Logger } from "@aws-lambda-powertools/logger";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { SQSClient } from "@aws-sdk/client-sqs";
import { systemClock } from "../lib/clock.ts";
import { buildEngine, type Engine } from "../lib/engine.ts";
import { EmfMetrics } from "../lib/observability/metrics.ts";

/**
 * The adapter layer: the only place that reads the environment. Infra sets SKYFORGE_TABLE and
 * SKYFORGE_QUEUE_URLS (a JSON map of queue name → url); neither is a secret.
 */
function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

export function engineFromEnv(serviceName: string): { engine: Engine; logger: Logger } {
  const logger = new Logger({ serviceName });
  const queueUrls = new Map(
    Object.entries(JSON.parse(required("SKYFORGE_QUEUE_URLS")) as Record<string, string>),
  );
  const engine = buildEngine({
    dynamodb: new DynamoDBClient({}),
    sqs: new SQSClient({}),
    table: required("SKYFORGE_TABLE"),
    queueUrls,
    clock: systemClock,
    metrics: new EmfMetrics(serviceName),
    log: {
      debug: (message, attributes) => logger.debug(message, attributes ?? {}),
      info: (message, attributes) => logger.info(message, attributes ?? {}),
      warn: (message, attributes) => logger.warn(message, attributes ?? {}),
      error: (message, attributes) => logger.error(message, attributes ?? {}),
    },
  });
  return { engine, logger };
}
