import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { S3Client } from "@aws-sdk/client-s3";
import type { SQSClient } from "@aws-sdk/client-sqs";
import { app } from "../../app/index.ts";
import { systemClock } from "../../lib/clock.ts";
import { parsePoolConfig, resolvePoolKinds } from "../../lib/declarations/pool-config.ts";
import { buildEngine, openDurableRun } from "../../lib/engine.ts";
import { silentLog } from "../../lib/observability/log.ts";
import { MemoryMetrics } from "../../lib/observability/metrics.ts";
import type { Engine } from "../../lib/services/engine-services.ts";
import { CLAIMS_BUCKET } from "../../local/emulators.ts";

/**
 * The app's own engine on a table and queues a test provisioned, with an operator's pool file (its
 * JSON text) laid over the app's pool kinds, as the pool process under test sees them; quiet. The
 * test enqueues and reads jobs through it while a real pool process runs them.
 */
export function appEngine(
  clients: { dynamodb: DynamoDBClient; sqs: SQSClient; s3: S3Client },
  table: string,
  urls: ReadonlyMap<string, { url: string }>,
  poolConfigText?: string,
): Engine {
  return buildEngine({
    durableRuns: openDurableRun,
    app,
    poolKinds: resolvePoolKinds(
      app.queues,
      app.poolKinds,
      poolConfigText === undefined ? undefined : parsePoolConfig(poolConfigText),
    ),
    ...clients,
    // The bucket the local stack names, which its pool process gets too (local/pool-process.ts).
    claimsBucket: CLAIMS_BUCKET,
    table,
    queueUrls: new Map([...urls].map(([name, q]) => [name, q.url])),
    clock: systemClock,
    metrics: new MemoryMetrics(),
    log: silentLog,
  });
}
