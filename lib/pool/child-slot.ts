import { AsyncLocalStorage } from "node:async_hooks";
import * as z from "zod";
import type { PoolKindSpec } from "../app/pool-kind.ts";
import { ThrottledError } from "../errors.ts";
import type { AnyKind, JobContext } from "../job/kind.ts";
import type { ChildGroup } from "./child-group.ts";
import type { WarmChild } from "./warm-child.ts";

/** What happened on a child, for the pool's metrics and logs. */
export type ChildEvent = "dispatched" | "desync" | "timeout" | "rip";

/** The child the pool reserved for one delivery before claiming it. */
export interface ChildSlot {
  group: ChildGroup;
  child: WarmChild;
  observe(event: ChildEvent, job: { id: string; kind: string; queue: string }, detail?: string): void;
}

/**
 * The pool runs each delivery inside `slots.run(slot, …)`; the kind's handler, called deep inside
 * the shared record processor, finds its reserved child here.
 */
export const slots = new AsyncLocalStorage<ChildSlot>();

/** A child that dies mid-job gets the job again on a fresh child once; a second death fails the attempt. */
const RERUNS_AFTER_RIP = 1;

async function runOnReservedChild(spec: PoolKindSpec, payload: unknown, ctx: JobContext): Promise<unknown> {
  const slot = slots.getStore();
  if (!slot) throw new Error(`kind "${spec.name}" runs on the pool tier only; no child is reserved here`);
  const job = ctx.job;
  const request = { id: job.id, kind: job.kind, attempt: ctx.attempt, payload };
  slot.observe("dispatched", job);
  let end = await slot.child.exchange(request, ctx.signal);
  for (let rerun = 0; rerun < RERUNS_AFTER_RIP && "failure" in end && end.failure === "exited"; rerun++) {
    slot.observe("rip", job, end.detail);
    slot.child = slot.group.replace(slot.child);
    end = await slot.child.exchange(request, ctx.signal);
  }
  if ("reply" in end) {
    const reply = end.reply;
    if (reply.status === "ok") return reply.result ?? null;
    if (reply.status === "throttled") throw new ThrottledError(reply.retry_after_secs);
    throw new Error(reply.message);
  }
  switch (end.failure) {
    case "desync":
      slot.observe("desync", job, end.detail);
      throw new Error(`child out of sync: ${end.detail}`);
    case "exited":
      throw new Error(`child died mid-job twice: ${end.detail}`);
    case "aborted":
      // The run is already decided by its abort cause (timeout, cancel, lost lease, shutdown).
      if (end.cause === "timeout") slot.observe("timeout", job);
      throw new Error(`child killed: ${String(end.cause)}`);
  }
}

/**
 * A pool kind as the engine's registry sees it: any JSON payload (the child validates it), the
 * kind's timeout and attempts, a handler that only runs where the pool reserved a child.
 */
export function poolKindDefinition(spec: PoolKindSpec): AnyKind {
  return {
    name: spec.name,
    payload: z.json(),
    queue: spec.queue,
    maxAttempts: spec.maxAttempts,
    timeoutSeconds: spec.timeoutSeconds,
    handler: (payload, ctx) => runOnReservedChild(spec, payload, ctx),
  };
}
