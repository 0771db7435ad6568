import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { SQSClient } from "@aws-sdk/client-sqs";
import type { Clock } from "./clock.ts";
import { buildRegistry, type KindRegistry } from "./kinds/registry.ts";
import type { Log } from "./observability/log.ts";
import type { JobMetrics } from "./observability/metrics.ts";
import { Producer } from "./producer/enqueue.ts";
import type { EventSourceControl } from "./queue-control/event-source-control.ts";
import { queues as declaredQueues, type QueueDeclaration } from "./queues.ts";
import { RateLimiter } from "./rate-limit/rate-limiter.ts";
import type { RateLimitScope } from "./rate-limit/scopes.ts";
import { RunningJobs } from "./runtime/running-jobs.ts";
import { JobStore } from "./store/job-store.ts";
import { SqsTransport } from "./transport/sqs-transport.ts";

export interface EngineConfig {
  dynamodb: DynamoDBClient;
  sqs: SQSClient;
  table: string;
  /** queue name → SQS url */
  queueUrls: ReadonlyMap<string, string>;
  /** queue name → its dead-letter queue's url (the reaper drains them, GET /queues counts them) */
  dlqUrls?: ReadonlyMap<string, string>;
  /** Turns a queue's event source on/off and sets its concurrency (Lambda's mapping or the local poller). */
  eventSources?: EventSourceControl;
  clock: Clock;
  metrics: JobMetrics;
  log: Log;
  queues?: readonly QueueDeclaration[];
  registry?: KindRegistry;
  rateLimitScopes?: readonly RateLimitScope[];
  random?: () => number;
}

/** Everything the functions and the local stack share, wired from injected clients and config. */
export interface Engine {
  store: JobStore;
  transport: SqsTransport;
  producer: Producer;
  registry: KindRegistry;
  queues: readonly QueueDeclaration[];
  clock: Clock;
  metrics: JobMetrics;
  log: Log;
  /** Runs in flight in this process, so a same-process cancel aborts without waiting for a heartbeat. */
  running: RunningJobs;
  /** One per process: it remembers each bucket's last state, so a known denial costs no request. */
  rateLimiter: RateLimiter;
  eventSources?: EventSourceControl;
  random?: () => number;
}

export function buildEngine(config: EngineConfig): Engine {
  const queues = config.queues ?? declaredQueues;
  const registry = config.registry ?? buildRegistry();
  const store = new JobStore(config.dynamodb, config.table, config.clock);
  const transport = new SqsTransport(config.sqs, config.queueUrls, config.dlqUrls);
  const { clock, metrics, log } = config;
  const producer = new Producer({ store, transport, registry, queues, clock, metrics, log });
  return {
    store,
    transport,
    producer,
    registry,
    queues,
    clock,
    metrics,
    log,
    running: new RunningJobs(),
    rateLimiter: new RateLimiter({
      store: store.ctx,
      ...(config.rateLimitScopes ? { scopes: config.rateLimitScopes } : {}),
    }),
    ...(config.eventSources ? { eventSources: config.eventSources } : {}),
    ...(config.random ? { random: config.random } : {}),
  };
}
