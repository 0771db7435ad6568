import { readFileSync } from "node:fs";
import { Logger } from "@aws-lambda-powertools/logger";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { S3Client } from "@aws-sdk/client-s3";
import { SQSClient } from "@aws-sdk/client-sqs";
import { app } from "../app/index.ts";
import { systemClock } from "../lib/clock.ts";
import { loadPoolKinds } from "../lib/declarations/pool-config.ts";
import type { PoolKindSpec } from "../lib/declarations/pool-kind.ts";
import { buildEngine } from "../lib/engine.ts";
import { EmfMetrics } from "../lib/observability/metrics.ts";
import type { EventSourceControl } from "../lib/queue-control/event-source-control.ts";
import type { Engine } from "../lib/services/engine-services.ts";

/**
 * The adapter layer: the only place that reads the environment. Infra sets (none is a secret):
 * - SKYFORGE_TABLE;
 * - SKYFORGE_CLAIMS_BUCKET, the bucket of payloads and results over 8 KiB (lib/claims/);
 * - SKYFORGE_QUEUE_URLS, a JSON map of queue name → url;
 * - SKYFORGE_DLQ_URLS, the same for dead-letter queues (reaper and API);
 * - SKYFORGE_EVENT_SOURCE_MAPPINGS, queue name → the worker's event source mapping UUID (only for
 *   the functions that pause queues or change their concurrency: API and reaper, which pass
 *   `eventSources`; the others ignore it);
 * - SKYFORGE_POOL_CONFIG, optionally, the path of a JSON file that adds or overrides pool kinds.
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

/** The pool kinds: the app's, with the operator's SKYFORGE_POOL_CONFIG file laid over them. */
export function poolKindsFromEnv(): PoolKindSpec[] {
  return loadPoolKinds(app.queues, app.poolKinds, process.env.SKYFORGE_POOL_CONFIG, (path) =>
    readFileSync(path, "utf8"),
  );
}

export interface EngineFromEnvOptions {
  /**
   * Builds the event source control from SKYFORGE_EVENT_SOURCE_MAPPINGS. Passed in by the entry
   * points that need it (functions/lambda-event-sources.ts), so the Lambda client is bundled and
   * loaded only where it is used.
   */
  eventSources?: (mappings: ReadonlyMap<string, string>) => EventSourceControl;
}

/** The app's engine (with the pool kinds in force, read once) and its logger. */
export function engineFromEnv(
  serviceName: string,
  options: EngineFromEnvOptions = {},
): { engine: Engine; logger: Logger } {
  const logger = new Logger({ serviceName });
  const dlqUrls = jsonMap("SKYFORGE_DLQ_URLS", true);
  const mappings = jsonMap("SKYFORGE_EVENT_SOURCE_MAPPINGS", true);
  const eventSources = mappings && options.eventSources?.(mappings);
  const poolKinds = poolKindsFromEnv();
  const engine = buildEngine({
    app,
    poolKinds,
    dynamodb: new DynamoDBClient({}),
    sqs: new SQSClient({}),
    // AWS_ENDPOINT_URL_S3 points it elsewhere (the local stack's pool); path-style there, as AWS allows.
    s3: new S3Client({ forcePathStyle: process.env.AWS_ENDPOINT_URL_S3 !== undefined }),
    claimsBucket: required("SKYFORGE_CLAIMS_BUCKET"),
    table: required("SKYFORGE_TABLE"),
    queueUrls: jsonMap("SKYFORGE_QUEUE_URLS") as Map<string, string>,
    ...(dlqUrls ? { dlqUrls } : {}),
    ...(eventSources ? { eventSources } : {}),
    clock: systemClock,
    // Logs carry the function's own service name; metrics share one, so dashboards can name them.
    metrics: new EmfMetrics(),
    log: {
      debug: (message, attributes) => logger.debug(message, attributes ?? {}),
      info: (message, attributes) => logger.info(message, attributes ?? {}),
      warn: (message, attributes) => logger.warn(message, attributes ?? {}),
      error: (message, attributes) => logger.error(message, attributes ?? {}),
    },
  });
  return { engine, logger };
}
