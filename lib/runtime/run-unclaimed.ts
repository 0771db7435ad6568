import type { QueueDeclaration } from "../declarations/queue-declaration.ts";
import type { DeliveryLane } from "../job/lanes.ts";
import { MAX_VISIBILITY_SECONDS } from "../limits.ts";
import { jobFields } from "../observability/log.ts";
import { retentionExpiry } from "../retention.ts";
import type { JobItem, JobSeed } from "../store/job-item.ts";
import { type RecordedOutcome, recordOutcome } from "../store/outcome-ops.ts";
import { type JobMessage, seedFromMessage } from "../transport/job-message.ts";
import { deliveredPayload, stowResult } from "./claim-check.ts";
import { handlerContext } from "./handler-context.ts";
import { type Decision, decideOutcome } from "./outcome.ts";
import { precheckRun } from "./precheck.ts";
import type { Ack, InboundRecord, WorkerDeps } from "./record-types.ts";
import { runHandler } from "./run-handler.ts";
import type { VisibilitySink } from "./visibility-changes.ts";

type UnclaimedLane = Extract<DeliveryLane, "at-least-once" | "fire-and-forget">;

export interface UnclaimedDelivery {
  msg: JobMessage & { lane: UnclaimedLane };
  record: InboundRecord;
  queue: QueueDeclaration;
  visibility: VisibilitySink;
  /** Cools the queue down and sends the message afresh with the delay (the processor's throttle). */
  throttle(now: number, delaySeconds: number): Promise<void>;
  /** A job's end reaches its group; false when it could not (the message stays). */
  recordInGroups(item: JobItem): Promise<Ack>;
}

/**
 * A run of the at-least-once or fire-and-forget lane (docs/architecture.md §16): no claim, no lease,
 * no fence. The attempt is the message's receive count; the message's visibility is the only hold
 * (kept by the queue's long visibility timeout on Lambda, renewed here every third of a lease for
 * the pool). One write records the outcome: at-least-once writes every end, fire-and-forget only
 * failures, the dead, and a success after a recorded failure. A duplicate delivery may run the
 * handler twice; the first end recorded stays.
 */
export async function runUnclaimed(deps: WorkerDeps, d: UnclaimedDelivery): Promise<Ack> {
  const { msg, record, queue } = d;
  const { store, clock, metrics, log } = deps;
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
  const ready = precheckRun(deps.registry, item, await deliveredPayload(deps.claims, msg));
  const decision: Decision =
    "outcome" in ready ? ready : await run(deps, d, item, ready.kind, ready.payload, attempt);
  metrics.time("runDuration", msg.queue, msg.kind, clock.now() - started);
  const fields = jobFields(msg, attempt);
  const now = clock.now();
  switch (decision.outcome) {
    case "done": {
      metrics.count("succeeded", msg.queue, msg.kind);
      log.debug("job done", fields);
      // fire-and-forget writes nothing on success, unless a failure of it was recorded before.
      if (msg.lane === "fire-and-forget" && attempt === 1) return true;
      const expiresAt = retentionExpiry(now, queue.retentionDays.done);
      const job = { id: msg.id, attempt };
      const result = await stowResult(deps.claims, job, { json: decision.result }, now, expiresAt);
      return settleWith(deps, d, seed, attempt, { status: "done", result, expiresAt });
    }
    case "dead":
    case "cancelled": {
      metrics.count("dead", msg.queue, msg.kind);
      const error = decision.outcome === "dead" ? decision.error : (decision.error ?? "cancelled");
      log.warn("job dead", { ...fields, error });
      const expiresAt = retentionExpiry(now, queue.retentionDays.dead);
      return settleWith(deps, d, seed, attempt, { status: "dead", error, expiresAt });
    }
    case "retry":
    case "reschedule": {
      metrics.count("retried", msg.queue, msg.kind);
      const delaySeconds = Math.min(decision.delaySeconds, MAX_VISIBILITY_SECONDS);
      log.info("job will retry", { ...fields, delaySeconds, error: decision.error });
      if (msg.lane === "fire-and-forget") {
        const runAt = now + delaySeconds * 1000;
        await recordOutcome(store, seed, attempt, { status: "queued", error: decision.error, runAt });
      }
      await d.visibility.change(msg.queue, record.receiptHandle, delaySeconds);
      return false;
    }
    case "throttled": {
      metrics.count("throttled", msg.queue, msg.kind);
      await d.throttle(now, decision.delaySeconds);
      return true;
    }
    case "released":
    case "abandon":
      metrics.count("released", msg.queue, msg.kind);
      await d.visibility.change(msg.queue, record.receiptHandle, 0);
      return false;
  }
}

async function settleWith(
  deps: WorkerDeps,
  d: UnclaimedDelivery,
  seed: JobSeed,
  attempt: number,
  outcome: RecordedOutcome,
) {
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
  kind: Parameters<typeof runHandler>[0],
  payload: unknown,
  attempt: number,
): Promise<Decision> {
  const { queue, record, msg } = d;
  const controller = new AbortController();
  const leaseMs = queue.leaseSeconds * 1000;
  // Keeps the message hidden while the handler runs (the pool receives with a lease-long visibility).
  const extend = () => deps.transport.changeVisibility(msg.queue, record.receiptHandle, queue.leaseSeconds);
  const timer = setInterval(() => void extend().catch(() => undefined), leaseMs / 3);
  timer.unref();
  const unregister = deps.running?.register(item.id, (cause) => controller.abort(cause));
  const timeoutSeconds = msg.timeoutSeconds ?? kind.timeoutSeconds;
  try {
    const end = await runHandler(
      kind,
      payload,
      handlerContext(deps, item, "", extend),
      controller,
      timeoutSeconds * 1000,
    );
    return decideOutcome(end, {
      attempt,
      maxAttempts: msg.maxAttempts,
      backoff: kind.backoff ?? queue.backoff,
      timeoutSeconds,
      ...(deps.random ? { random: deps.random } : {}),
    });
  } finally {
    clearInterval(timer);
    unregister?.();
  }
}
