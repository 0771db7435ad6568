import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { SQSClient } from "@aws-sdk/client-sqs";
import type { ClaimsS3 } from "./claims/claim-store.ts";
import type { Clock } from "./clock.ts";
import { Coalescing } from "./coalesce/coalesce-service.ts";
import type { App } from "./declarations/define-app.ts";
import type { PoolKindSpec } from "./declarations/pool-kind.ts";
import { tableLayout } from "./declarations/scale.ts";
import { Durable } from "./durable/durable-service.ts";
import type { DurableRunOpener } from "./durable/open-run.ts";
import { Flow } from "./flow/flow-service.ts";
import { Groups } from "./groups/group-service.ts";
import type { JournalLimits } from "./job/journal-bounds.ts";
import { buildRegistry, type KindRegistry } from "./job/registry.ts";
import type { Log } from "./observability/log.ts";
import type { JobMetrics } from "./observability/metrics.ts";
import { poolKindDefinition } from "./pool/reserved-child.ts";
import { Producer } from "./producer/enqueue.ts";
import type { EventSourceControl } from "./queue-control/event-source-control.ts";
import { RateLimiter } from "./rate-limit/rate-limiter.ts";
import { PublishQueue } from "./realtime/publish-queue.ts";
import type { RealtimeSecret } from "./realtime/realtime-deps.ts";
import { Realtime } from "./realtime/realtime-service.ts";
import type { Engine } from "./services/engine-services.ts";
import type { RealtimePublisher } from "./services/realtime-service.ts";
import { RunningJobs } from "./services/running-jobs.ts";
import { createStoreContext } from "./store/context.ts";
import type { RunStamp } from "./store/lease-ops.ts";
import { SqsTransport } from "./transport/sqs-transport.ts";

/** Durable runs, for the entry points that run jobs to give their engine (EngineConfig.durableRuns). */
export { openDurableRun } from "./durable/open-run.ts";
/** What buildEngine gives: its callers name it from here, beside its config. */
export type { Engine };

export interface EngineConfig {
  app: App;
  dynamodb: DynamoDBClient;
  sqs: SQSClient;
  table: string;
  /** The claims bucket: payloads and results over CLAIM_CHECK_BYTES live there (lib/claims/). */
  s3: ClaimsS3;
  claimsBucket: string;
  /** queue name → SQS url */
  queueUrls: ReadonlyMap<string, string>;
  /** queue name → its dead-letter queue's url (the reaper drains them, GET /queues counts them) */
  dlqUrls?: ReadonlyMap<string, string>;
  /** Turns a queue's event source on/off and sets its concurrency (Lambda's mapping or the local poller). */
  eventSources?: EventSourceControl;
  /** The pool kinds in force, when an operator's file overrides the app's (lib/declarations/pool-config.ts). */
  poolKinds?: readonly PoolKindSpec[];
  clock: Clock;
  metrics: JobMetrics;
  log: Log;
  random?: () => number;
  /** The HTTP API's base URL, for durable jobs' token urls; they are bare paths without it. */
  tokenUrlBase?: string;
  /** Who runs this process's attempts (Engine.runner): lambda:…, pool:…, local:<pid>. */
  runner?: () => RunStamp;
  /** Durable jobs' journal bounds; the documented JOURNAL_LIMITS unless a test injects smaller ones. */
  journalLimits?: JournalLimits;
  /** Realtime (docs/architecture.md §25): absent, nothing is published and no token is minted. */
  realtime?: RealtimeConfig;
  /**
   * Durable jobs' runs (lib/durable/open-run.ts), for the processes that run jobs: absent (the API,
   * the enqueue and the scheduled functions), their code stays out of the bundle.
   */
  durableRuns?: DurableRunOpener;
}

export interface RealtimeConfig {
  publisher: RealtimePublisher;
  /** Signs subscription tokens (the stack's own secret); absent on a function that mints none. */
  secret?: RealtimeSecret;
  /** Every topic starts with it: the app and stage, as one IoT endpoint serves a whole region. */
  prefix: string;
  /** Where subscribers connect, read when a token is minted (the local broker's port is known late). */
  url?: () => string | undefined;
}

/** With no realtime configured, its publishes go nowhere. */
const NO_PUBLISHER: RealtimePublisher = { publish: async () => {} };

/** Every kind a deployment of the app runs: its Lambda kinds and the pool kinds in force. */
export function appRegistry(app: Pick<App, "kinds">, poolKinds: readonly PoolKindSpec[]): KindRegistry {
  return buildRegistry([...app.kinds, ...poolKinds.map(poolKindDefinition)]);
}

/**
 * Wires the engine's services from injected clients and the app. The top of lib/'s layers: nothing
 * in lib/ imports this module (docs/architecture.md §2).
 */
export function buildEngine(config: EngineConfig): Engine {
  const { app, clock, metrics, log } = config;
  const poolKinds = config.poolKinds ?? app.poolKinds;
  const registry = appRegistry(app, poolKinds);
  const store = createStoreContext(config.dynamodb, config.table, clock, tableLayout(app.scale));
  const transport = new SqsTransport(config.sqs, config.queueUrls, config.dlqUrls);
  const queues = app.queues;
  const claims = { s3: config.s3, bucket: config.claimsBucket };
  const running = new RunningJobs();
  const shared = { store, claims, transport, registry, queues, clock, metrics, log };
  const live = config.realtime;
  const realtime = new Realtime({
    store,
    clock,
    metrics,
    log,
    queue: new PublishQueue(live?.publisher ?? NO_PUBLISHER, metrics, log),
    publishing: live !== undefined,
    positions: new Map(),
    queues,
    prefix: live?.prefix ?? "skyforge",
    secret: live?.secret,
    url: live?.url ?? (() => undefined),
  });
  const flow = new Flow(shared);
  const coalesce = new Coalescing({ store, queues, clock, metrics, log, running });
  const producer = new Producer({ ...shared, running, flow, coalesce, realtime });
  const groups = new Groups({ store, producer, registry, queues, clock, metrics, log, running, realtime });
  const engine: Engine = {
    app,
    store,
    claims,
    transport,
    producer,
    groups,
    realtime,
    // Its token urls take the base URL in force when each token is made (a local stack sets it later).
    durable: new Durable(
      {
        app,
        store,
        claims,
        registry,
        transport,
        queues,
        clock,
        metrics,
        producer,
        realtime,
        tokenUrlBase: () => engine.tokenUrlBase,
        ...(config.journalLimits ? { journalLimits: config.journalLimits } : {}),
      },
      config.durableRuns,
    ),
    flow,
    coalesce,
    poolKinds,
    registry,
    queues,
    clock,
    metrics,
    log,
    running,
    rateLimiter: new RateLimiter({ store, scopes: app.rateLimits }),
    ...(config.eventSources ? { eventSources: config.eventSources } : {}),
    ...(config.random ? { random: config.random } : {}),
    ...(config.tokenUrlBase ? { tokenUrlBase: config.tokenUrlBase } : {}),
    ...(config.runner ? { runner: config.runner } : {}),
  };
  return engine;
}
