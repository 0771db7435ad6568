import type { ClaimStore } from "../claims/claim-store.ts";
import type { Clock } from "../clock.ts";
import type { App } from "../declarations/define-app.ts";
import type { PoolKindSpec } from "../declarations/pool-kind.ts";
import type { QueueDeclaration } from "../declarations/queue-declaration.ts";
import type { CheckedRequest } from "../job/check-request.ts";
import type { FlowKey } from "../job/flow-key.ts";
import type { BusiestKeys, FlowKeyView } from "../job/flow-views.ts";
import type { ChildrenQuery, GroupChildrenPage, GroupView } from "../job/group-schemas.ts";
import type { AnyKind, CompletionContext, GroupSpec } from "../job/kind.ts";
import type { KindRegistry } from "../job/registry.ts";
import type { BatchResultItem, EnqueueResult } from "../job/schemas.ts";
import type { Log } from "../observability/log.ts";
import type { JobMetrics } from "../observability/metrics.ts";
import type { EventSourceControl } from "../queue-control/event-source-control.ts";
import type { RateLimiter } from "../rate-limit/rate-limiter.ts";
import type { StoreContext } from "../store/context.ts";
import type { Member } from "../store/group-item.ts";
import type { JobItem } from "../store/job-item.ts";
import type { RunStamp } from "../store/lease-ops.ts";
import type { JobMessage } from "../transport/job-message.ts";
import type { SqsTransport } from "../transport/sqs-transport.ts";
import type { CoalesceService } from "./coalesce-service.ts";
import type { DurableService } from "./durable-service.ts";
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

/** Job groups (docs/architecture.md §15); lib/groups/group-service.ts. */
export interface GroupService {
  /** `trace`: the caller's W3C trace context, the group's span's parent (docs/architecture.md §23). */
  create(raw: unknown, trace?: string): Promise<{ group: GroupView; created: boolean }>;
  createFromJob(job: JobItem, fence: string | undefined, spec: GroupSpec): Promise<GroupView>;
  addChildren(id: string, raw: unknown): Promise<GroupView>;
  seal(id: string): Promise<GroupView>;
  get(id: string): Promise<GroupView>;
  children(id: string, query: ChildrenQuery): Promise<GroupChildrenPage>;
  cancel(id: string): Promise<GroupView>;
  /** A job became terminal: record it in its group, finish the group it completes. Idempotent. */
  recordEnd(job: JobItem): Promise<void>;
  completionFor(job: JobItem): Promise<CompletionContext | undefined>;
  check(): Promise<{ groupsChecked: number; groupsExpired: number; groupRepairs: number }>;
}

/** A job an enqueue is about to write (lib/producer/plan.ts's Planned), as flow control reads and marks it. */
export interface ParkableJob {
  item: JobItem;
  delaySeconds: number;
  scheduled: boolean;
  writesItem: boolean;
  /** Set by parkIfKeyFull: its key is full, its item is written in the key's line, no message goes. */
  parked?: boolean;
}

/** A delivery that may go on to its claim, with the place of its flow key it took (if it took one). */
export interface FlowPass {
  place?: { key: FlowKey; since: number };
}

/**
 * Flow control per key (docs/architecture.md §20); lib/flow/flow-service.ts. The engine's one door
 * to it: one call for each stage a flow-controlled job passes.
 */
export interface FlowService {
  /** Enqueue, before the writes: jobs due now whose key is full are marked parked (no message goes). */
  parkIfKeyFull(planned: readonly ParkableJob[]): Promise<void>;
  /** Enqueue, after the parked items are written: one look at each key. Never throws. */
  lookAfterParkingAll(parked: readonly ParkableJob[]): Promise<void>;
  /**
   * Claim, before it: the key's cool-down, rate and concurrency. true/false: the delivery's Ack (it
   * waits: parked, sent again, or hidden through `hide`); a FlowPass: go on to the claim.
   */
  gate(msg: JobMessage, hide: (seconds: number) => Promise<void>): Promise<boolean | FlowPass>;
  /** Claim lost: the place its gate took goes back (a late copy of a finished job must not keep one). */
  releasePlace(pass: FlowPass, jobId: string): Promise<void>;
  /** Settle, once the finalize landed: the run's place goes to the key's next parked job. Never throws. */
  leavePlace(job: JobItem): Promise<void>;
  /** Settle, a throttle: a flow-controlled job's key cools, not its queue. false: not a flow key's job. */
  coolKey(msg: JobMessage, now: number, delaySeconds: number): Promise<boolean>;
  /** The reaper: every key with parked jobs looked at in turn, places of ended runs handed on. */
  heal(budgetMs?: number): Promise<{ keys: number; sent: number }>;
  /** GET /keys/{kind}/{key}. */
  keyView(kind: string, key: string): Promise<FlowKeyView>;
  /** GET /keys?queue=…. */
  busiestKeys(queue: string, limit: number): Promise<BusiestKeys>;
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
