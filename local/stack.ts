import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { S3Client } from "@aws-sdk/client-s3";
import type { SQSClient } from "@aws-sdk/client-sqs";
import { createClient } from "../client/create-client.ts";
import { httpTransport } from "../client/http-transport.ts";
import { systemClock } from "../lib/clock.ts";
import type { AppNames } from "../lib/declarations/app-names.ts";
import type { Engine, EngineConfig, RealtimeConfig } from "../lib/engine.ts";
import { silentLog } from "../lib/observability/log.ts";
import { MemoryMetrics } from "../lib/observability/metrics.ts";
import { mcpHttpEndpoint } from "../mcp/http-sessions.ts";
import { mcpKinds } from "../mcp/kind-tools.ts";
import { createMcpServer } from "../mcp/server.ts";
import { type DataDir, openDataDir } from "./data-dir.ts";
import {
  CLAIMS_BUCKET,
  dynamoClient,
  type Emulators,
  LOOPBACK,
  type ProvisionedQueue,
  provisionClaimsBucket,
  provisionTable,
  s3Client,
  sqsClient,
  startEmulators,
} from "./emulators.ts";
import { startLocalHttp } from "./http-server.ts";
import { LiveApp } from "./live-app.ts";
import { LocalEventSources } from "./local-event-sources.ts";
import type { PoolProcessOptions } from "./pool-process.ts";
import { startRealtimeBroker } from "./realtime-broker.ts";
import { Ticker } from "./ticker.ts";

export interface LocalStackOptions {
  /** What to run: the app's queues become emulated queues, its kinds run in the workers. */
  app: EngineConfig["app"];
  /** The pool kinds in force when an operator's file overrides the app's. */
  poolKinds?: EngineConfig["poolKinds"];
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  clock?: EngineConfig["clock"];
  log?: EngineConfig["log"];
  /** Shorter than the declared visibility (timeout + window + 10 s), so a crashed run is retried quickly in tests. */
  visibilityTimeoutSeconds?: number;
  /** Lets a caller add SDK middleware (the bench counts requests) before anything is sent. */
  instrument?: (clients: { dynamodb: DynamoDBClient; sqs: SQSClient; s3: S3Client }) => void;
  random?: () => number;
  /** How often the reaper, cleanup and cron run (AWS: every 60 s). */
  tickSeconds?: number;
  /** Start the tick timer; tests that drive `ticker.tick()` themselves turn it off. */
  autoTick?: boolean;
  /** Runs the Fargate pool's entry point as a child process for the pool-tier queues. */
  pool?: Pick<PoolProcessOptions, "command" | "baseEnv" | "settings" | "drainSeconds" | "waitSeconds">;
  /**
   * Where the emulators keep the table and the queues, so jobs, schedules and queue settings survive
   * a restart (`npm start` uses `.skyforge/`). Without it, everything lives in memory.
   */
  dataDir?: string;
  /** Empties `dataDir` before starting. */
  fresh?: boolean;
  /** The realtime broker's port; 0 (a free one) unless given. */
  realtimePort?: number;
  /** Wraps the engine's realtime publisher (a test drops messages to see subscribers catch up). */
  wrapRealtimePublisher?: (publisher: RealtimeConfig["publisher"]) => RealtimeConfig["publisher"];
}

/** The local stack's topics start with this (a deployed stack's with its app and stage). */
export const LOCAL_REALTIME_PREFIX = "skyforge/local";

/** What the emulators lack (TTL): the local cleanup sweeps this many items per tick instead. */
const LOCAL_SWEEP_ITEMS_PER_TICK = 5_000;

export interface LocalStack {
  url: string;
  /** The realtime broker: MQTT over WebSocket on loopback (docs/guide/realtime.md). */
  realtimeUrl: string;
  engine: Engine;
  metrics: MemoryMetrics;
  clients: { dynamodb: DynamoDBClient; sqs: SQSClient; s3: S3Client };
  queues: ReadonlyMap<string, ProvisionedQueue>;
  endpoints: { dynamodb: string; sqs: string };
  /** The scheduled functions (reaper, cleanup, cron); `tick()` runs them all once now. */
  ticker: Ticker;
  /** The Lambda-tier queues' event sources (the pollers standing in for Lambda's). */
  eventSources: LocalEventSources;
  /** Where the table and queues are kept; undefined when they live in memory. */
  dataDir: string | undefined;
  /**
   * Serves `app` from now on, keeping the emulators, the table and the queues (so no job is lost):
   * see LiveApp. Rejects, with the previous app still serving, if the new one can't be made ready.
   */
  reload(app: EngineConfig["app"], poolKinds?: EngineConfig["poolKinds"]): Promise<void>;
  stop(): Promise<void>;
}

/** The three clients on running emulators (fauxqs serves S3 on its SQS port); the test harnesses use it too. */
export function emulatorClients(emulators: Pick<Emulators, "dynamodb" | "sqs">) {
  return {
    dynamodb: dynamoClient(emulators.dynamodb.endpoint),
    sqs: sqsClient(emulators.sqs.endpoint),
    s3: s3Client(emulators.sqs.endpoint),
  };
}

/**
 * The whole service in one process: dynalite + fauxqs on loopback (kept in `dataDir` when given),
 * the table and queues created, or found again, from the same app value infra deploys, one
 * event-source poller per queue feeding the real worker handler, and one HTTP server for the API and
 * the Lambda Invoke path.
 */
export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  const log = options.log ?? silentLog;
  const stoppers: (() => Promise<void>)[] = [];
  const dataDir: DataDir | undefined = options.dataDir
    ? await openDataDir(options.dataDir, { fresh: options.fresh ?? false, waitMs: 15_000 })
    : undefined;
  let emulators: Awaited<ReturnType<typeof startEmulators>>;
  try {
    emulators = await startEmulators(dataDir);
  } catch (err) {
    dataDir?.release();
    throw err;
  }
  try {
    const clients = emulatorClients(emulators);
    options.instrument?.(clients);

    const table = "skyforge-jobs";
    // Both are idempotent: a kept data directory already holds the table and the queues.
    await provisionTable(clients.dynamodb, table);
    await provisionClaimsBucket(clients.s3, CLAIMS_BUCKET);
    const metrics = new MemoryMetrics();
    const eventSources = new LocalEventSources();
    const tickMs = (options.tickSeconds ?? 60) * 1000;
    const clock = options.clock ?? systemClock;
    // Realtime's broker (docs/guide/realtime.md) on a loopback port of its own; it reaches the
    // engine through `live`, so it follows a reload.
    let live: LiveApp | undefined;
    const broker = await startRealtimeBroker({
      host: options.host ?? LOOPBACK,
      ...(options.realtimePort !== undefined ? { port: options.realtimePort } : {}),
      prefix: LOCAL_REALTIME_PREFIX,
      ...(dataDir ? { dataDir: dataDir.root } : {}),
      now: () => clock.now(),
      realtime: () => (live as LiveApp).deployment.engine.realtime,
    });
    stoppers.unshift(() => broker.close());
    live = await LiveApp.prepare(
      {
        clients,
        table,
        metrics,
        eventSources,
        clock,
        log,
        ...(options.random ? { random: options.random } : {}),
        realtime: {
          publisher: options.wrapRealtimePublisher?.(broker.publisher) ?? broker.publisher,
          secret: broker.secret,
          prefix: broker.prefix,
          url: () => broker.url,
        },
        settings: { tickMs, cleanupSweepItemsPerRun: LOCAL_SWEEP_ITEMS_PER_TICK },
        ...(options.visibilityTimeoutSeconds !== undefined
          ? { visibilityTimeoutSeconds: options.visibilityTimeoutSeconds }
          : {}),
        ...(options.pool
          ? {
              pool: {
                ...options.pool,
                endpoints: { dynamodb: emulators.dynamodb.endpoint, sqs: emulators.sqs.endpoint },
                realtime: { prefix: broker.prefix, publishUrl: broker.publishUrl },
              },
            }
          : {}),
      },
      options.app,
      options.poolKinds,
    );
    // Stopped last (after the ticker): the runs the pollers hold finish first.
    stoppers.unshift(() => live.stopPollers());

    const ticker = scheduledTicker(live, tickMs, log);
    if (options.autoTick !== false) ticker.start();
    stoppers.unshift(() => ticker.stop());

    // /mcp's servers call the API as any client does, over this server's own URL (known once it
    // listens), and list the kinds served now, so they follow a reload too.
    let ownUrl = "";
    const mcp = mcpHttpEndpoint(async () =>
      createMcpServer({
        client: createClient<AppNames>({ transport: httpTransport({ url: ownUrl }) }),
        kinds: await mcpKinds(live.kinds),
      }),
    );

    // The HTTP server and the ticker reach the handlers through `live`, so they follow a reload.
    const http = await startLocalHttp({
      host: options.host ?? LOOPBACK,
      port: options.port ?? 3000,
      // Every route on the one loopback server, as API Gateway routes them: the token callback to
      // its own handler (deployed as its own function, without IAM auth), the rest to the API's.
      api: (event, context) => live.deployment.api(event, context),
      tokenCallback: (event, context) => live.deployment.tokenCallback(event, context),
      // "api" takes what API Gateway would send functions/api.ts: the client's Invoke transport.
      functions: {
        enqueue: (event) => live.deployment.functions.enqueue(event),
        api: (event) => live.deployment.functions.api(event),
      },
      mcp,
      log,
    });
    ownUrl = http.url;
    stoppers.unshift(() => http.close());
    stoppers.unshift(() => mcp.close());
    // Stopped first (before the HTTP server and the emulators), so it can hand its jobs back.
    stoppers.unshift(() => live.stopPool());
    // Durable jobs' token urls start with the API's URL, known once the server listens (port 0
    // picks one): the pollers and the pool start only now.
    await live.start(http.url);

    return {
      url: http.url,
      realtimeUrl: broker.url,
      get engine() {
        return live.deployment.engine;
      },
      metrics,
      clients,
      queues: live.queues,
      endpoints: { dynamodb: emulators.dynamodb.endpoint, sqs: emulators.sqs.endpoint },
      ticker,
      eventSources,
      dataDir: dataDir?.root,
      reload: (app, poolKinds) => live.reload(app, poolKinds),
      stop: async () => {
        for (const stop of stoppers) await stop();
        clients.dynamodb.destroy();
        clients.sqs.destroy();
        clients.s3.destroy();
        await emulators.stop();
        dataDir?.release();
      },
    };
  } catch (err) {
    for (const stop of stoppers) await stop().catch(() => {});
    await emulators.stop().catch(() => {});
    dataDir?.release();
    throw err;
  }
}

/** EventBridge Scheduler's part: the reaper, cleanup and cron every tick. */
function scheduledTicker(live: LiveApp, tickMs: number, log: EngineConfig["log"]): Ticker {
  const cronOwner = `local-${process.pid}`;
  return new Ticker(
    [
      { name: "reaper", run: () => live.deployment.reaper() },
      { name: "cleanup", run: () => live.deployment.cleanup() },
      { name: "cron", run: () => live.deployment.cron.run(cronOwner) },
    ],
    tickMs,
    log,
  );
}
