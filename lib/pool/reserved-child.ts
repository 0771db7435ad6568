import { AsyncLocalStorage } from "node:async_hooks";
import * as z from "zod";
import type { PoolKindSpec } from "../declarations/pool-kind.ts";
import { ChildFailure, ConfigError, ThrottledError } from "../errors.ts";
import { type BatchContext, type BatchItem, type BatchOutcome, batchKindDefinition } from "../job/batch.ts";
import { type CollectHandler, collectHandler } from "../job/collect.ts";
import type { AnyKind, JobContext } from "../job/kind.ts";
import { batchExchange, type ChildReply, type Exchange, singleExchange } from "./child-protocol.ts";
import type { KindChildren } from "./kind-children.ts";
import type { WarmChild } from "./warm-child.ts";

/** What happened on a child, for the pool's metrics and logs. */
export type ChildEvent = "dispatched" | "desync" | "timeout" | "rip";

/** What a child works on: one job, or one batch call (its id the call's). */
export interface ChildWork {
  id: string;
  kind: string;
  queue: string;
}

/**
 * The child the pool reserved for one delivery (or one batch call) before claiming it, with the
 * kind's children it came from (a child that dies mid-job is replaced from them). Called a
 * reservation, not a "slot", so that the word keeps one meaning in the project.
 */
export interface ReservedChild {
  children: KindChildren;
  child: WarmChild;
  observe(event: ChildEvent, work: ChildWork, detail?: string): void;
}

/**
 * The pool runs each delivery inside `currentChild.run(reserved, …)`; the kind's handler, called
 * deep inside the shared record processor, finds its reserved child here.
 */
export const currentChild = new AsyncLocalStorage<ReservedChild>();

/** A child that dies mid-job gets the job again on a fresh child once; a second death fails the attempt. */
const RERUNS_AFTER_RIP = 1;

/**
 * Sends one request to the reserved child and returns its answer. A child that dies mid-request is
 * replaced and asked once more; any other failure (a desync, a second death, an abort) throws, and
 * whatever was asked fails its attempt.
 */
async function askReservedChild<R>(
  spec: PoolKindSpec,
  work: ChildWork,
  exchange: Exchange<R>,
  signal: AbortSignal,
): Promise<R> {
  const reserved = currentChild.getStore();
  // A pool kind wired into a Lambda worker: a deployment mistake, not the job's.
  if (!reserved)
    throw new ConfigError(`kind "${spec.name}" runs on the pool tier only; no child is reserved here`);
  reserved.observe("dispatched", work);
  let end = await reserved.child.send(exchange, signal);
  for (let rerun = 0; rerun < RERUNS_AFTER_RIP && "failure" in end && end.failure === "exited"; rerun++) {
    reserved.observe("rip", work, end.detail);
    reserved.child = reserved.children.replace(reserved.child);
    end = await reserved.child.send(exchange, signal);
  }
  if ("reply" in end) return end.reply;
  switch (end.failure) {
    case "desync":
      reserved.observe("desync", work, end.detail);
      throw new ChildFailure(`child out of sync: ${end.detail}`);
    case "exited":
      throw new ChildFailure(`child died mid-job twice: ${end.detail}`);
    case "aborted":
      // The run is already decided by its abort cause (timeout, cancel, lost lease, shutdown).
      if (end.cause === "timeout") reserved.observe("timeout", work);
      throw new ChildFailure(`child killed: ${String(end.cause)}`);
  }
}

/** A child's answer for one job as the job's outcome: its result, or the error that fails it. */
export function outcomeOf(reply: ChildReply): BatchOutcome<unknown> {
  if (reply.status === "ok") return reply.result ?? null;
  if (reply.status === "throttled")
    return new ThrottledError(reply.retry_after_secs, reply.limit ? { limit: reply.limit } : undefined);
  return new Error(reply.message);
}

async function runOnReservedChild(spec: PoolKindSpec, payload: unknown, ctx: JobContext): Promise<unknown> {
  const { job } = ctx;
  const request = { id: job.id, kind: job.kind, attempt: ctx.attempt, payload };
  const outcome = outcomeOf(await askReservedChild(spec, job, singleExchange(request), ctx.signal));
  if (outcome instanceof Error) throw outcome;
  return outcome;
}

/**
 * One batch call on the reserved child: one request with every item, one reply line with an
 * outcome per item id. The child is not told of an item cancelled mid-call (the protocol has no
 * such message): that item ends by its cancel whatever the child answers, and the child is killed
 * only once the whole call is aborted (ctx.signal).
 */
async function runBatchOnReservedChild(
  spec: PoolKindSpec,
  items: BatchItem<unknown>[],
  ctx: BatchContext,
): Promise<BatchOutcome<unknown>[]> {
  const request = {
    id: ctx.batchId,
    kind: ctx.kind,
    key: ctx.key,
    items: items.map(({ id, attempt, payload }) => ({ id, attempt, payload })),
  };
  const work = { id: ctx.batchId, kind: ctx.kind, queue: ctx.queue };
  const reply = await askReservedChild(spec, work, batchExchange(request), ctx.signal);
  return reply.items.map(outcomeOf);
}

/**
 * A pool kind as the engine's registry sees it: any JSON payload (the child validates it), the
 * kind's timeout and attempts, a handler that only runs where the pool reserved a child. A batch
 * pool kind is a batch kind whose calls go to the child as batch requests.
 */
export function poolKindDefinition(spec: PoolKindSpec): AnyKind {
  const kind = {
    name: spec.name,
    payload: z.json(),
    queue: spec.queue,
    maxAttempts: spec.maxAttempts,
    timeoutSeconds: spec.timeoutSeconds,
    ...(spec.onExhausted ? { onExhausted: spec.onExhausted } : {}),
  };
  if (spec.batch) {
    const { key, ...settings } = spec.batch;
    return batchKindDefinition({
      ...kind,
      key,
      batch: settings,
      handler: (items, ctx) => runBatchOnReservedChild(spec, items, ctx),
    });
  }
  const run: AnyKind["handler"] = (payload, ctx) => runOnReservedChild(spec, payload, ctx);
  return {
    ...kind,
    ...(spec.debounce ? { debounce: spec.debounce } : {}),
    ...(spec.singleton ? { singleton: spec.singleton } : {}),
    ...(spec.flow ? { flow: spec.flow } : {}),
    handler:
      spec.debounce?.mode === "collect" ? collectHandler(run as CollectHandler<unknown, unknown>) : run,
  };
}
