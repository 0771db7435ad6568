import type * as z from "zod";
import type { BatchPolicy } from "../batching/key-batches.ts";
import { UsageError } from "../errors.ts";
import type { Log } from "../observability/log.ts";
import type { JobContext, KindDefinition, RateLimitAnswer, RateLimitTake } from "./kind.ts";

/**
 * Batch kinds (docs/architecture.md §18): jobs of one key handled in one call, each still its own
 * job (id, attempts, status, result), claimed and finalized under its own fence.
 */

/** A key is at most this many characters (UTF-16 units), as the contract says. */
export const MAX_BATCH_KEY_CHARS = 256;

/** Lambda's event source takes up to 10 000 records a batch; skyforge caps a call at this. */
export const MAX_LAMBDA_BATCH_SIZE = 100;
/** The event source's batching window: SQS event sources wait at most 300 s to fill a batch. */
export const MAX_LAMBDA_BATCH_WAIT_SECONDS = 300;

/** The pool gathers items itself, across receives: a call takes up to this many. */
export const MAX_POOL_BATCH_SIZE = 1000;
/**
 * A gathered pool item is hidden a lease at a time while it waits; SQS lets a received message stay
 * hidden 12 hours in all, and the wait must leave its run and retries most of that.
 */
export const MAX_POOL_BATCH_WAIT_SECONDS = 900;

export interface BatchSettings {
  /** Items one call takes at most (1..100 on the Lambda tier, 1..1000 on the pool). */
  maxSize: number;
  /** How long a key's first waiting item may wait for company (size and duration policies). */
  maxWaitSeconds: number;
  policy: BatchPolicy;
  /** Calls of one key that may run at once across the cluster; 1 when absent. */
  maxKeyConcurrency?: number;
  /** A key with this many jobs waiting refuses more (429 key_backlog_full); no bound when absent. */
  maxPendingPerKey?: number;
}

/** One job of a batch call, as the handler sees it. */
export interface BatchItem<P> {
  id: string;
  /** 1 for the item's first run. */
  attempt: number;
  payload: P;
  /** Aborts when this item alone is cancelled (or loses its lease), and when the whole call is aborted. */
  signal: AbortSignal;
}

/** What a batch handler sees of the call as a whole. */
export interface BatchContext<Scope extends string = string> {
  kind: string;
  queue: string;
  key: string;
  /** Names this call in logs and in each item's result of the demo kind. */
  batchId: string;
  /** Aborts on timeout, shutdown, or once every item is cancelled. */
  signal: AbortSignal;
  log: Log;
  /** As a job's `ctx.rateLimit`: `n` tokens, or `{ tokens, key }` from the key's own bucket. */
  rateLimit(scope: Scope, take?: number | RateLimitTake): Promise<RateLimitAnswer>;
}

/**
 * One outcome per item, in the items' order: a value is that item's result; an Error fails that item
 * alone (UnrecoverableError, RetryAfterError and ThrottledError work per item). A throw from the
 * handler fails every item of the call.
 */
export type BatchOutcome<R> = R | Error;

export interface BatchSpec<P = unknown, R = unknown> {
  /** The key of a job, from its payload, computed once at enqueue and stored with the job. */
  key(payload: P): string;
  settings: BatchSettings;
  handler(items: BatchItem<P>[], ctx: BatchContext): Promise<readonly BatchOutcome<R>[]>;
}

/** A batch kind's declaration: a kind's fields, its key, its batching settings and its batch handler. */
export type BatchKindInput<
  S extends z.ZodType,
  R,
  N extends string,
  Q extends string,
  Scope extends string,
> = Omit<KindDefinition<S, R, N, Q>, "handler" | "lane" | "load"> & {
  key(payload: z.output<S>): string;
  batch: BatchSettings;
  handler(items: BatchItem<z.output<S>>[], ctx: BatchContext<Scope>): Promise<readonly BatchOutcome<R>[]>;
};

/** A kind definition that is a batch kind. */
export type BatchKindDefinition<S extends z.ZodType = z.ZodType, R = unknown> = KindDefinition<S, R> & {
  batch: BatchSpec<z.output<S>, R>;
};

/**
 * The kind a batch declaration stands for. Its single-job handler runs the batch handler with one
 * item, so every path that runs one job (a record alone in its delivery, a retry) keeps the same
 * code; the worker groups what it can (lib/runtime/process-batch.ts).
 */
export function batchKindDefinition<S extends z.ZodType, R, const N extends string, const Q extends string>(
  def: BatchKindInput<S, R, N, Q, string>,
): KindDefinition<S, R, N, Q> & { batch: BatchSpec<z.output<S>, R> } {
  const { key, batch, handler, ...kind } = def;
  const spec: BatchSpec<z.output<S>, R> = {
    key,
    settings: batch,
    handler: handler as BatchSpec<z.output<S>, R>["handler"],
  };
  return {
    ...kind,
    batch: spec,
    async handler(payload: z.output<S>, ctx: JobContext): Promise<R> {
      const outcomes = await spec.handler(
        [{ id: ctx.job.id, attempt: ctx.attempt, payload, signal: ctx.signal }],
        {
          kind: ctx.job.kind,
          queue: ctx.job.queue,
          key: key(payload),
          batchId: ctx.job.id,
          signal: ctx.signal,
          log: ctx.log,
          rateLimit: (scope, take) => ctx.rateLimit(scope, take),
        },
      );
      const outcome = checkedOutcomes(1, outcomes)[0];
      if (outcome instanceof Error) throw outcome;
      return outcome as R;
    },
  };
}

/**
 * The handler's outcomes, checked: one per item. A handler that answers for more or fewer items has
 * lost track of which is which, so the whole call fails (each item retried alone by its backoff).
 */
export function checkedOutcomes<R>(items: number, outcomes: unknown): readonly BatchOutcome<R>[] {
  if (!Array.isArray(outcomes))
    throw new UsageError(`the batch handler returned ${typeof outcomes}, not one outcome per item`);
  if (outcomes.length !== items)
    throw new UsageError(`the batch handler returned ${outcomes.length} outcomes for ${items} items`);
  return outcomes as BatchOutcome<R>[];
}

// biome-ignore lint/suspicious/noExplicitAny: a registry keeps batch kinds of every payload type.
export const isBatchKind = (kind: KindDefinition<any, unknown>): kind is BatchKindDefinition =>
  "batch" in kind && kind.batch !== undefined;
