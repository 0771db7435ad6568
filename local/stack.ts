import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { SQSClient } from "@aws-sdk/client-sqs";
import { GetQueueAttributesCommand } from "@aws-sdk/client-sqs";
import { handleEnqueueInvoke } from "../lib/api/invoke.ts";
import { createApiHandler } from "../lib/api/routes.ts";
import type { App } from "../lib/app/define-app.ts";
import type { PoolKindSpec } from "../lib/app/pool-kind.ts";
import { tierOf } from "../lib/app/queue-declaration.ts";
import { type Clock, systemClock } from "../lib/clock.ts";
import { buildEngine } from "../lib/engine.ts";
import { type Log, silentLog } from "../lib/observability/log.ts";
import { MemoryMetrics } from "../lib/observability/metrics.ts";
import { Cleanup } from "../lib/ops/cleanup.ts";
import { runCronTick } from "../lib/ops/cron-tick.ts";
import { runReaper } from "../lib/ops/reaper.ts";
import { syncDeclaredSchedules } from "../lib/ops/sync-schedules.ts";
import { createWorker } from "../lib/runtime/worker.ts";
import type { Engine } from "../lib/services/engine-services.ts";
import {
  dynamoClient,
  type ProvisionedQueue,
  provisionQueues,
  provisionTable,
  sqsClient,
  startEmulators,
} from "./emulators.ts";
import { EventSourcePoller } from "./event-source-poller.ts";
import { startLocalHttp } from "./http-server.ts";
import { LocalEventSources } from "./local-event-sources.ts";
import { type PoolProcessOptions, startPoolProcess } from "./pool-process.ts";
import { Ticker } from "./ticker.ts";

export interface LocalStackOptions {
  /** What to run: the app's queues become emulated queues, its kinds run in the workers. */
  app: App;
  /** The pool kinds in force when an operator's file overrides the app's. */
  poolKinds?: readonly PoolKindSpec[];
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  clock?: Clock;
  log?: Log;
  /** Shorter than the declared 6x-timeout visibility, so a crashed run is retried quickly in tests. */
  visibilityTimeoutSeconds?: number;
  /** Lets a caller add SDK middleware (the bench counts requests) before anything is sent. */
  instrument?: (clients: { dynamodb: DynamoDBClient; sqs: SQSClient }) => void;
  random?: () => number;
  /** How often the reaper, cleanup and cron run (AWS: every 60 s). */
  tickSeconds?: number;
  /** Start the tick timer; tests that drive `ticker.tick()` themselves turn it off. */
  autoTick?: boolean;
  /** Runs the Fargate pool's entry point as a child process for the pool-tier queues. */
  pool?: Pick<PoolProcessOptions, "command" | "baseEnv" | "drainSeconds" | "waitSeconds">;
}

/** What the emulators lack (TTL): the local cleanup sweeps this many items per tick instead. */
const LOCAL_SWEEP_ITEMS_PER_TICK = 5_000;

export interface LocalStack {
  url: string;
  engine: Engine;
  metrics: MemoryMetrics;
  clients: { dynamodb: DynamoDBClient; sqs: SQSClient };
  queues: ReadonlyMap<string, ProvisionedQueue>;
  endpoints: { dynamodb: string; sqs: string };
  /** The scheduled functions (reaper, cleanup, cron); `tick()` runs them all once now. */
  ticker: Ticker;
  stop(): Promise<void>;
}

/**
 * The whole service in one process: dynalite + fauxqs on loopback, the table and queues created
 * from the same app value infra deploys, one event-source poller per queue feeding the real worker
 * handler, and one HTTP server for the API and the Lambda Invoke path.
 */
export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  const log = options.log ?? silentLog;
  const stoppers: (() => Promise<void>)[] = [];
  const emulators = await startEmulators();
  try {
    const clients = {
      dynamodb: dynamoClient(emulators.dynamodb.endpoint),
      sqs: sqsClient(emulators.sqs.endpoint),
    };
    options.instrument?.(clients);

    const queues = options.app.queues;
    const table = "skyforge-jobs";
    await provisionTable(clients.dynamodb, table);
    const provisioned = await provisionQueues(
      clients.sqs,
      queues,
      "skyforge",
      options.visibilityTimeoutSeconds !== undefined
        ? { visibilityTimeoutSeconds: options.visibilityTimeoutSeconds }
        : {},
    );
    const queueUrls = new Map([...provisioned].map(([name, q]) => [name, q.url]));
    const dlqUrls = new Map([...provisioned].map(([name, q]) => [name, q.dlqUrl]));
    const metrics = new MemoryMetrics();
    const eventSources = new LocalEventSources();
    const engine = buildEngine({
      app: options.app,
      ...(options.poolKinds ? { poolKinds: options.poolKinds } : {}),
      dynamodb: clients.dynamodb,
      sqs: clients.sqs,
      table,
      queueUrls,
      dlqUrls,
      eventSources,
      clock: options.clock ?? systemClock,
      metrics,
      log,
      ...(options.random ? { random: options.random } : {}),
    });

    for (const q of queues.filter((d) => tierOf(d) === "lambda")) {
      const urls = provisioned.get(q.name) as ProvisionedQueue;
      const attrs = await clients.sqs.send(
        new GetQueueAttributesCommand({ QueueUrl: urls.url, AttributeNames: ["QueueArn"] }),
      );
      const poller = new EventSourcePoller(clients.sqs, {
        queueName: q.name,
        queueUrl: urls.url,
        queueArn: attrs.Attributes?.QueueArn ?? q.name,
        batchSize: q.batchSize,
        batchWindowSeconds: q.batchWindowSeconds,
        maxConcurrency: q.maxConcurrency,
        handler: createWorker(engine, { recordConcurrency: q.recordConcurrency }),
        log,
      });
      eventSources.add(q.name, poller);
      poller.start();
      stoppers.push(() => poller.stop());
    }

    if (options.pool) {
      const pool = startPoolProcess({
        ...options.pool,
        endpoints: { dynamodb: emulators.dynamodb.endpoint, sqs: emulators.sqs.endpoint },
        table,
        queueUrls,
        dlqUrls,
        log,
      });
      // Stopped before the emulators, so it can hand its jobs back.
      stoppers.unshift(async () => {
        await pool.stop();
      });
    }

    await syncDeclaredSchedules(engine.store, options.app.schedules, engine.clock.now(), log);
    const tickMs = (options.tickSeconds ?? 60) * 1000;
    const cleanup = new Cleanup(engine, { sweepItemsPerRun: LOCAL_SWEEP_ITEMS_PER_TICK });
    const ticker = new Ticker(
      [
        { name: "reaper", run: () => runReaper(engine) },
        { name: "cleanup", run: () => cleanup.run() },
        { name: "cron", run: () => runCronTick({ engine, owner: `local-${process.pid}`, tickMs }) },
      ],
      tickMs,
      log,
    );
    if (options.autoTick !== false) ticker.start();
    stoppers.unshift(() => ticker.stop());

    const http = await startLocalHttp({
      host: options.host ?? "127.0.0.1",
      port: options.port ?? 3000,
      api: createApiHandler(engine),
      functions: { enqueue: (event) => handleEnqueueInvoke(engine, event) },
      log,
    });
    stoppers.unshift(() => http.close());

    return {
      url: http.url,
      engine,
      metrics,
      clients,
      queues: provisioned,
      endpoints: { dynamodb: emulators.dynamodb.endpoint, sqs: emulators.sqs.endpoint },
      ticker,
      stop: async () => {
        for (const stop of stoppers) await stop();
        clients.dynamodb.destroy();
        clients.sqs.destroy();
        await emulators.stop();
      },
    };
  } catch (err) {
    for (const stop of stoppers) await stop().catch(() => {});
    await emulators.stop().catch(() => {});
    throw err;
  }
}
