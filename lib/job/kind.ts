import type * as z from "zod";
import type { Log } from "../observability/log.ts";
import type { DebounceSettings, SingletonSettings } from "./coalesce.ts";
import type { DurableContext } from "./durable.ts";
import type { FlowDeclaration } from "./flow.ts";
import type {
  ChildrenQuery,
  GroupChildrenPage,
  GroupCounts,
  GroupFailureMode,
  GroupView,
} from "./group-schemas.ts";
import type { DeliveryLane } from "./lanes.ts";
import type { StreamWriter } from "./realtime-wire.ts";
import type { EnqueueRequest, EnqueueResult } from "./schemas.ts";

/** Why the runtime aborted a handler's signal (`ctx.signal.reason`). "shutdown": the pool is stopping. */
export type AbortCause = "cancelled" | "lease_lost" | "timeout" | "shutdown";

export type RateLimitAnswer = { granted: true } | { granted: false; waitMs: number };

/** What a follow-up enqueue may set besides kind and payload. */
export type FollowUpOptions = Omit<EnqueueRequest, "kind" | "payload"> & {
  /**
   * Names this follow-up among the parent's: the default uniqueKey is derived from the parent job's
   * id and this step, so a retried handler that enqueues again gets the first job back. Defaults to
   * the follow-up's kind; give distinct steps when one run enqueues the same kind more than once.
   */
  step?: string;
};

/** A group a handler creates (`ctx.group`): its children and the job that folds their results. */
export interface GroupSpec {
  children: readonly unknown[];
  onComplete: { kind: string; payload?: unknown; queue?: string };
  failure?: GroupFailureMode;
  /**
   * Names this group among the job's: one group per (job, step), so a retried handler gets its group
   * back. Defaults to the completion kind's name.
   */
  step?: string;
  expiresInSeconds?: number;
}

/** What a group's completion job learns of its group (`ctx.completion`). */
export interface CompletionContext {
  groupId: string;
  /** failed: a child ended dead, a terminate group failed, or the group expired unsealed. */
  status: "succeeded" | "failed";
  counts: GroupCounts;
  /** The child that failed a terminate group, and its error. */
  failedChild?: { id: string; error: string };
  expired?: boolean;
  /** The children, page by page, in the order they were added, with their results. */
  children(query?: ChildrenQuery): Promise<GroupChildrenPage>;
}

/**
 * What a handler sees (docs/architecture.md §12), but for `enqueue` and `group`. `Scope` comes from the app, so
 * a misspelled rate-limit scope is a compile error.
 */
/** What `ctx.rateLimit` takes besides the scope. */
export interface RateLimitTake {
  /** Tokens to take; 1 when left out. */
  tokens?: number;
  /** The bucket of this key within the scope (e.g. the tenant); the scope's own bucket when left out. */
  key?: string;
}

/**
 * `step`, `sleep`, `createToken`, `waitForToken` and `waitForEvent` come from DurableContext
 * (docs/architecture.md §22): fenced single-job runs only; elsewhere they throw a UsageError.
 */
export interface JobContextBase<Scope extends string = string> extends DurableContext {
  job: { id: string; kind: string; queue: string; maxAttempts: number; createdAt: string };
  /**
   * 1 for the first run. Not the run's identity: a throttle, a hand-back or a durable wait gives its
   * attempt back, so two runs can share one; `fence` tells them apart.
   */
  attempt: number;
  /**
   * This run's lease token, the fence (docs/architecture.md §4): a write conditional on (job id,
   * fence) can't land after a takeover. Absent on the lanes that run without a claim (at-least-once,
   * fire-and-forget).
   */
  fence?: string;
  /** Aborts on cancel, lost lease, timeout or shutdown; `signal.reason` is an AbortCause. */
  signal: AbortSignal;
  /** Structured log lines stamped with jobId, kind, queue and attempt. Never pass the payload in. */
  log: Log;
  /** Renew the lease now (the runtime also does this on a timer). */
  heartbeat(): Promise<void>;
  /**
   * Take tokens (default 1) from a cluster-wide bucket declared in the app's rateLimits: `n`, or
   * `{ tokens, key }`. With a `key` (a tenant's id: a non-empty string of at most 256 characters)
   * the take is from that key's own bucket, with the scope's capacity and refill, so one tenant's
   * calls never spend another's. A denial says how long to wait; throw ThrottledError(waitMs / 1000)
   * to cool the whole queue down without spending the attempt.
   */
  rateLimit(scope: Scope, take?: number | RateLimitTake): Promise<RateLimitAnswer>;
  /** Set when this job is a group's completion job: the group's outcome, counts and children. */
  completion?: CompletionContext;
  /**
   * A writer of streamed output pushed to the job's subscribers (docs/guide/realtime.md): chunks of
   * at most 32 KiB, numbered per stream; a name follows the step-name rules.
   */
  stream(name: string): StreamWriter;
}

/** The engine's view of the handler context; an app's kinds see the typed one (lib/declarations/define-app.ts). */
export interface JobContext extends JobContextBase {
  /** Enqueues a follow-up job, at most once per (parent job, step) however often this run is retried. */
  enqueue(kind: string, payload: unknown, options?: FollowUpOptions): Promise<EnqueueResult>;
  /**
   * Fans out: a group of children and the job that runs once they all ended, at most once per
   * (job, step) however often this run is retried. When this job is itself a group's child, its
   * membership there passes to the new group (the first one it creates): the outer group waits for
   * the inner one.
   */
  group(spec: GroupSpec): Promise<GroupView>;
}

/**
 * What a suspended durable job does when it resumes under another version of its kind than the one
 * that started its journal (docs/guide/durable-jobs.md, "Versions"): go on replaying its records
 * ("continue", the default), wait for an operator ("pause"), or drop its records and run from the top
 * under the new version ("restart").
 */
export const onVersionChangeChoices = ["pause", "continue", "restart"] as const;
export type OnVersionChange = (typeof onVersionChangeChoices)[number];

export const onExhaustedChoices = ["dead", "pause"] as const;
export type OnExhausted = (typeof onExhaustedChoices)[number];

export interface BackoffPolicy {
  baseSeconds: number;
  maxSeconds: number;
}

export interface KindDefinition<
  S extends z.ZodType = z.ZodType,
  R = unknown,
  Name extends string = string,
  Queue extends string = string,
> {
  name: Name;
  /** What the kind does, in a sentence: its `enqueue_<kind>` tool's description on the MCP server (docs/guide/mcp.md). */
  description?: string;
  /**
   * The data each of its wait tokens takes, by the token's name (`ctx.createToken(name, …)`), for
   * whoever completes them: the MCP server lists it on an `input_required` task and checks
   * `tasks/update`'s data against it (docs/guide/mcp.md). The handler's own check is still
   * `ctx.waitForToken(token, { schema })`.
   */
  tokens?: Readonly<Record<string, z.ZodType>>;
  payload: S;
  queue: Queue;
  maxAttempts: number;
  timeoutSeconds: number;
  /** A start deadline for the kind's jobs (an enqueue's own wins): see EnqueueRequest.startWithinSeconds. */
  startWithinSeconds?: number;
  /** Overrides the queue's backoff for this kind. */
  backoff?: BackoffPolicy;
  /**
   * What a job that used its last attempt becomes: "dead" (the default), or "paused", waiting for an
   * operator to resume it (POST /jobs/{id}/resume) or end it (docs/architecture.md §21). Only on
   * the lanes that claim their runs.
   */
  onExhausted?: OnExhausted;
  /**
   * The version of the kind's code a durable job records when its journal starts (1..64 characters).
   * Absent: derived from the handler's source (lib/job/kind-version.ts).
   */
  version?: string;
  /** What a suspended durable job does when it resumes under another version: "continue" when absent. */
  onVersionChange?: OnVersionChange;
  /** Which guarantees the kind pays for (docs/architecture.md §16); fenced when absent. */
  lane?: DeliveryLane;
  /** One run per burst of enqueues of a key (docs/architecture.md §19). Not with `singleton`. */
  debounce?: DebounceSettings<z.output<S>>;
  /** At most one running job per key (docs/architecture.md §19). Not with `debounce`. */
  singleton?: SingletonSettings<z.output<S>>;
  /**
   * Flow control per key (a tenant): runs at once and units started per period; one limit or a list
   * of up to 4, all of which a job must pass to start (docs/architecture.md §20).
   */
  flow?: FlowDeclaration<z.output<S>>;
  // A method, so a handler typed with the app's narrower context still fits the engine's registry.
  handler(payload: z.output<S>, ctx: JobContext): Promise<R>;
  /**
   * A kind declared with its schema and handler in a module of their own (LazyKindInput): the import
   * of that module. The engine calls it when a job of the kind first needs them, once per process
   * (lib/job/kind-loading.ts); until then `payload` and `handler` are absent.
   */
  load?: () => Promise<{ default: KindModule<S, R> }>;
}

/**
 * The part of a kind that loads on first use (docs/architecture.md §13): its payload schema and its
 * handler, the default export of a module the kind's declaration imports lazily (`load`), so a
 * function's init pays for neither, nor for what the handler imports.
 */
export interface KindModule<S extends z.ZodType = z.ZodType, R = unknown> {
  payload: S;
  // A method, as KindDefinition's: a handler typed with the app's context fits.
  handler(payload: z.output<S>, ctx: JobContext): Promise<R>;
}

/**
 * A kind's declaration: its handler's context is narrowed to the names `Ctx` knows. A debounce here
 * is trailing or leading; a collect kind's handler takes many payloads (defineCollectKind).
 */
export type KindInput<S extends z.ZodType, R, N extends string, Q extends string, Ctx> = Omit<
  KindDefinition<S, R, N, Q>,
  "handler" | "debounce" | "load"
> & {
  debounce?: DebounceSettings<z.output<S>> & { mode: "trailing" | "leading" };
  handler: (payload: z.output<S>, ctx: Ctx) => Promise<R>;
};

/**
 * A kind's declaration whose schema and handler load on first use: everything the engine needs at
 * init (name, queue, limits, lane, flow and coalesce settings, whose key functions take the parsed
 * payload), and `load`, the import of the module that default-exports `{ payload, handler }`
 * (built with the app's `defineJob`). One value still: the app lists it as any kind.
 */
export type LazyKindInput<S extends z.ZodType, R, N extends string, Q extends string> = Omit<
  KindDefinition<S, R, N, Q>,
  "handler" | "payload" | "debounce" | "load"
> & {
  debounce?: DebounceSettings<z.output<S>> & { mode: "trailing" | "leading" };
  load: () => Promise<{ default: KindModule<S, R> }>;
};

/**
 * A collect kind's declaration (docs/architecture.md §19): a debounce whose one run gets every
 * payload of the burst, in enqueue order, and returns one result per payload.
 */
export type CollectKindInput<S extends z.ZodType, R, N extends string, Q extends string, Ctx> = Omit<
  KindDefinition<S, R, N, Q>,
  "handler" | "debounce" | "singleton" | "lane" | "load"
> & {
  debounce: Omit<DebounceSettings<z.output<S>>, "mode">;
  handler: (payloads: z.output<S>[], ctx: Ctx) => Promise<readonly R[]>;
};

/**
 * A kind bound to no app (its queue and the kinds it enqueues are any strings), for tests and tools:
 * the payload type still flows from the schema into the handler. An app declares its kinds with the
 * `defineKind` bound to its own names (app/define.ts, built by lib/declarations/define-app.ts).
 */
export function defineUnboundKind<S extends z.ZodType, R, const N extends string, const Q extends string>(
  def: KindInput<S, R, N, Q, JobContext>,
): KindDefinition<S, R, N, Q> {
  return def as KindDefinition<S, R, N, Q>;
}

// biome-ignore lint/suspicious/noExplicitAny: the registry holds kinds of every payload type; each is checked by its own schema at the edge.
export type AnyKind = KindDefinition<any, unknown>;
