import type { App } from "../app/define-app.ts";
import type { PoolKindSpec } from "../app/pool-kind.ts";
import type { QueueDeclaration } from "../app/queue-declaration.ts";
import type { Clock } from "../clock.ts";
import type { KindRegistry } from "../job/registry.ts";
import type { BatchResultItem, EnqueueResult } from "../job/schemas.ts";
import type { Log } from "../observability/log.ts";
import type { JobMetrics } from "../observability/metrics.ts";
import type { EventSourceControl } from "../queue-control/event-source-control.ts";
import type { RateLimiter } from "../rate-limit/rate-limiter.ts";
import type { StoreContext } from "../store/context.ts";
import type { SqsTransport } from "../transport/sqs-transport.ts";
import type { RunningJobs } from "./running-jobs.ts";

export interface EnqueueOptions {
  /**
   * "live" (the API's rule): a uniqueKey dedupes while its job is not terminal.
   * "retained": it dedupes until the lock's retention runs out, even after the job finished. Cron
   * fires and handlers' follow-ups use it, so a retried tick or run never enqueues twice.
   */
  uniqueKeyScope?: "live" | "retained";
}

/** Takes producers' requests (validated here, against the app's kinds and queues). */
export interface JobProducer {
  enqueue(raw: unknown, options?: EnqueueOptions): Promise<EnqueueResult>;
  /** Up to 100 requests; a bad item fails alone. */
  enqueueBatch(raws: readonly unknown[]): Promise<BatchResultItem[]>;
}

/**
 * The services every operation shares, wired by lib/engine.ts from injected clients and the app.
 * This module sits below all its users, so none of them imports the builder.
 */
export interface Engine {
  app: App;
  store: StoreContext;
  transport: SqsTransport;
  producer: JobProducer;
  /** The pool kinds in force: the app's, with the operator's file (SKYFORGE_POOL_CONFIG) laid over them. */
  poolKinds: readonly PoolKindSpec[];
  /** The app's kinds plus the pool kinds in force. */
  registry: KindRegistry;
  queues: readonly QueueDeclaration[];
  clock: Clock;
  metrics: JobMetrics;
  log: Log;
  /** Runs in flight in this process, so a same-process cancel aborts without waiting for a heartbeat. */
  running: RunningJobs;
  /** One per process: it remembers each bucket's last state, so a known denial costs no request. */
  rateLimiter: RateLimiter;
  /** Turns a queue's event source on/off and sets its concurrency (Lambda's mapping or the local poller). */
  eventSources?: EventSourceControl;
  random?: () => number;
}
