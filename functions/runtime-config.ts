import { Logger } from "@aws-lambda-powertools/logger";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { LambdaClient } from "@aws-sdk/client-lambda";
import { SQSClient } from "@aws-sdk/client-sqs";
import { systemClock } from "../lib/clock.ts";
import { buildEngine, type Engine } from "../lib/engine.ts";
import { EmfMetrics } from "../lib/observability/metrics.ts";
import { LambdaEventSourceControl } from "../lib/queue-control/event-source-control.ts";

/**
 * The adapter layer: the only place that reads the environment. Infra sets (none is a secret):
 * - SKYFORGE_TABLE;
 * - SKYFORGE_QUEUE_URLS, a JSON map of queue name → url;
 * - SKYFORGE_DLQ_URLS, the same for dead-letter queues (reaper and API);
 * - SKYFORGE_EVENT_SOURCE_MAPPINGS, queue name → the worker's event source mapping UUID (only for
 *   the functions that pause queues or change their concurrency: API and reaper).
 */
function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

function jsonMap(name: string, optional = false): Map<string, string> | undefined {
  const raw = optional ? process.env[name] : required(name);
  if (!raw) return undefined;
  return new Map(Object.entries(JSON.parse(raw) as Record<string, string>));
}

export function engineFromEnv(serviceName: string): { engine: Engine; logger: Logger } {
  const logger = new Logger({ serviceName });
  const dlqUrls = jsonMap("SKYFORGE_DLQ_URLS", true);
  const mappings = jsonMap("SKYFORGE_EVENT_SOURCE_MAPPINGS", true);
  const engine = buildEngine({
    dynamodb: new DynamoDBClient({}),
    sqs: new SQSClient({}),
    table: required("SKYFORGE_TABLE"),
    queueUrls: jsonMap("SKYFORGE_QUEUE_URLS") as Map<string, string>,
    ...(dlqUrls ? { dlqUrls } : {}),
    ...(mappings ? { eventSources: new LambdaEventSourceControl(new LambdaClient({}), mappings) } : {}),
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
