import type { QueueDeclaration } from "../declarations/queue-declaration.ts";
import type { AnyKind } from "../job/kind.ts";
import type { DeliveryLane } from "../job/lanes.ts";
import { jobFields } from "../observability/log.ts";
import { endRunSpan, inSpan, runSpan, traceOfSpan } from "../observability/tracing.ts";
import type { JobItem, JobSeed } from "../store/job-item.ts";
import { type RecordedOutcome, recordOutcome } from "../store/outcome-ops.ts";
import { type JobMessage, seedFromMessage } from "../transport/job-message.ts";
import { deliveredPayload, stowResult } from "./claim-check.ts";
import { handlerContext } from "./handler-context.ts";
import type { Decision } from "./outcome.ts";
import { reportOutcome, type Settled, toFinalization, withoutClaim } from "./outcome-table.ts";
import { precheckRun } from "./precheck.ts";
import type { Ack, InboundRecord, WorkerDeps } from "./record-types.ts";
import { decideRun, JobWatch, loadFailure, superviseJob } from "./run-supervisor.ts";
import type { VisibilitySink } from "./visibility-changes.ts";

type UnclaimedLane = Extract<DeliveryLane, "at-least-once" | "fire-and-forget">;

export interface UnclaimedDelivery {
  msg: JobMessage & { lane: UnclaimedLane };
  record: InboundRecord;
  queue: QueueDeclaration;
  visibility: VisibilitySink;
  /** Cools the queue down and sends the message afresh with the delay (Admission.throttle). */
  throttle(now: number, delaySeconds: number): Promise<void>;
  /** A job's end reaches its group; false when it could not (the message stays). */
  recordInGroups(item: JobItem): Promise<Ack>;
}

/**
 * A run of the at-least-once or fire-and-forget lane (docs/architecture.md §16): no claim, no lease,
 * no fence. The attempt is the message's receive count; the message's visibility is the only hold
 * (kept by the queue's long visibility timeout on Lambda, renewed by the run's watch for the pool).
 * One write records the outcome: at-least-once writes every end, fire-and-forget only failures, the
 * dead, and a success after a recorded failure. A duplicate delivery may run the handler twice; the
 * first end recorded stays.
 */
export async function runUnclaimed(deps: WorkerDeps, d: UnclaimedDelivery): Promise<Ack> {
  const { msg, record } = d;
  const { clock, metrics } = deps;
  const attempt = Math.max(1, record.receiveCount ?? 1);
  const seed = seedFromMessage(msg);
  const item: JobItem = {
    pk: "",
    sk: "",
    ...seed,
    status: "running",
    attempts: attempt,
    startedAt: clock.now(),
  };
  const started = clock.now();
  metrics.count("started", msg.queue, msg.kind);
  metrics.time("queueLatency", msg.queue, msg.kind, Math.max(0, started - msg.runAt));
  const ready = await precheckRun(
    deps.registry,
    item,
    () => deliveredPayload(deps.claims, msg),
    clock.now(),
    (kind, error) => loadFailure(deps, item, kind, error, d.queue.backoff),
  );
  const decision = withoutClaim(
    "outcome" in ready ? ready : await run(deps, d, item, ready.kind, ready.payload),
  );
  metrics.time("runDuration", msg.queue, msg.kind, clock.now() - started);
  const now = clock.now();
  const written = await recordEnd(deps, d, seed, attempt, decision, now);
  const ack = await reportOutcome(deps, decision, {
    queue: msg.queue,
    kind: msg.kind,
    receiptHandle: record.receiptHandle,
    fields: jobFields(msg, attempt),
    visibility: d.visibility,
    throttle: (delaySeconds) => d.throttle(now, delaySeconds),
  });
  return written && ack;
}

/**
 * The lane's one write, from the outcome table's: fire-and-forget writes nothing on success unless
 * a failure of it was recorded before, and records a retry's failure; a throttle or a hand-back
 * writes nothing. result: false when the end could not reach its group (the message stays).
 */
async function recordEnd(
  deps: WorkerDeps,
  d: UnclaimedDelivery,
  seed: JobSeed,
  attempt: number,
  decision: Settled,
  now: number,
): Promise<Ack> {
  const fireAndForget = d.msg.lane === "fire-and-forget";
  const ending = toFinalization(decision, d.queue, now);
  if (ending.outcome === "retry" && fireAndForget) {
    // The failure is noted for the next attempt; the message's visibility carries the retry.
    await recordOutcome(deps.store, seed, attempt, {
      status: "queued",
      error: ending.error,
      runAt: ending.runAt,
    });
    return true;
  }
  let outcome: RecordedOutcome;
  if (ending.outcome === "done") {
    if (fireAndForget && attempt === 1) return true;
    const result = await stowResult(
      deps.claims,
      { id: seed.id, attempt },
      ending.result,
      now,
      ending.expiresAt,
    );
    outcome = { status: "done", result, expiresAt: ending.expiresAt };
  } else if (ending.outcome === "dead")
    outcome = {
      status: "dead",
      error: ending.error,
      expiresAt: ending.expiresAt,
      ...(ending.unstarted ? { unstarted: true as const } : {}),
    };
  else return true;
  const written = await recordOutcome(deps.store, seed, attempt, outcome);
  // A duplicate run recorded its end first: that end stays, this one is dropped.
  if (!written.recorded) {
    deps.metrics.count("duplicateDeliveries", d.msg.queue, d.msg.kind);
    return true;
  }
  return d.recordInGroups(written.item);
}

async function run(
  deps: WorkerDeps,
  d: UnclaimedDelivery,
  item: JobItem,
  kind: AnyKind,
  payload: unknown,
): Promise<Decision> {
  const { queue, record, msg } = d;
  const watch = new JobWatch(deps, item.id, {
    visibility: { queue: msg.queue, receiptHandle: record.receiptHandle, leaseSeconds: queue.leaseSeconds },
  });
  const timeoutSeconds = msg.timeoutSeconds ?? kind.timeoutSeconds;
  // The attempt's span under the job's trace; the handler's follow-ups are spans under it (§23).
  const span = runSpan(item);
  const runTrace = traceOfSpan(span);
  const ctx = handlerContext(
    deps,
    runTrace ? { ...item, trace: runTrace } : item,
    undefined,
    watch.keepAlive,
  );
  const end = await inSpan(span, () =>
    superviseJob(watch, (signal) => kind.handler(payload, { ...ctx, signal }), timeoutSeconds * 1000),
  );
  const run = { attempt: item.attempts, maxAttempts: msg.maxAttempts, timeoutSeconds };
  const decision = decideRun(deps, end, run, { kind: kind.backoff, queue: queue.backoff });
  endRunSpan(span, decision);
  return decision;
}
