import type { ClaimStore } from "../claims/claim-store.ts";
import type { Clock } from "../clock.ts";
import type { App } from "../declarations/define-app.ts";
import type { PoolKindSpec } from "../declarations/pool-kind.ts";
import type { QueueDeclaration } from "../declarations/queue-declaration.ts";
import type { CheckedRequest } from "../job/check-request.ts";
import type { AnyKind } from "../job/kind.ts";
import type { KindRegistry } from "../job/registry.ts";
import type { BatchResultItem, EnqueueResult } from "../job/schemas.ts";
import type { Log } from "../observability/log.ts";
import type { JobMetrics } from "../observability/metrics.ts";
import type { EventSourceControl } from "../queue-control/event-source-control.ts";
import type { RateLimiter } from "../rate-limit/rate-limiter.ts";
import type { StoreContext } from "../store/context.ts";
import type { Member } from "../store/group-item.ts";
import type { RunStamp } from "../store/lease-ops.ts";
import type { SqsTransport } from "../transport/sqs-transport.ts";
import type { CoalesceService } from "./coalesce-service.ts";
import type { DurableService } from "./durable-service.ts";
import type { FlowService } from "./flow-service.ts";
import type { GroupService } from "./group-service.ts";
import type { RealtimeService } from "./realtime-service.ts";
import type { RunningJobs } from "./running-jobs.ts";

export interface EnqueueOptions {
  /**
   * "live" (the API's rule): a uniqueKey dedupes while its job is not terminal.
   * "retained": it dedupes until the lock's retention runs out, even after the job finished. Cron
   * fires and handlers' follow-ups use it, so a retried tick or run never enqueues twice.
   */
  uniqueKeyScope?: "live" | "retained";
  /**
   * Group plumbing (docs/architecture.md §15): a fixed job id, the child's membership, the group it
   * completes.
   */
  job?: JobExtras;
}

export interface JobExtras {
  id?: string;
  member?: Member;
  completes?: string;
  /** A replay (POST /jobs/replay): the job this one runs again. */
  replayOf?: string;
  /** A durable handler's child (`ctx.invoke`): the parent its end resumes (lib/store/job-fields.ts). */
  parent?: { j: string; q: string; s: string };
  /** The W3C trace context its span is made under (lib/observability/tracing.ts); else the active one. */
  trace?: string;
}

/** A request the caller has already checked (lib/producer/validate.ts), with its group plumbing. */
export interface CheckedEnqueue {
  valid: CheckedRequest<AnyKind>;
  job?: JobExtras;
}

/** Takes producers' requests (validated here, against the app's kinds and queues). */
export interface JobProducer {
  enqueue(raw: unknown, options?: EnqueueOptions): Promise<EnqueueResult>;
  /** Up to 100 requests; a bad item fails alone. */
  enqueueBatch(raws: readonly unknown[], trace?: string): Promise<BatchResultItem[]>;
  /** Requests already checked, any number: sent in batches of 10, each failing alone. */
  enqueueChecked(entries: readonly CheckedEnqueue[]): Promise<BatchResultItem[]>;
}

/**
 * The services every operation shares, wired by lib/engine.ts from injected clients and the app.
 * This module sits below all its users, so none of them imports the builder.
 */
export interface Engine {
  app: App;
  store: StoreContext;
  /** Payloads and results too large for the store (lib/claims/). */
  claims: ClaimStore;
  transport: SqsTransport;
  producer: JobProducer;
  groups: GroupService;
  /** Status, steps and streamed output pushed to subscribers (docs/architecture.md §25). */
  realtime: RealtimeService;
  /** Durable steps, sleeps and waits (docs/architecture.md §22). */
  durable: DurableService;
  /** Flow control per key (docs/architecture.md §20); lib/flow/flow-service.ts. */
  flow: FlowService;
  /** Debounce and singleton (docs/architecture.md §19): lib/services/coalesce-service.ts. */
  coalesce: CoalesceService;
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
  /**
   * The HTTP API's base URL, which a durable job's token url starts with (docs/architecture.md §22):
   * the durable service reads it when it makes a token.
   */
  tokenUrlBase?: string;
  /**
   * Who runs this process's attempts and when its platform stops the current invocation, asked at
   * each claim (the job's attempt history: docs/architecture.md §4). Set by the entry point.
   */
  runner?: () => RunStamp;
}
