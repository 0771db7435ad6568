import { randomBytes } from "node:crypto";
import type { QueueDeclaration } from "../declarations/queue-declaration.ts";
import type { AnyKind } from "../job/kind.ts";
import { isTerminal } from "../job/status.ts";
import { MAX_VISIBILITY_SECONDS } from "../limits.ts";
import { jobFields } from "../observability/log.ts";
import { effectiveSettings, withSettings } from "../queue-control/settings.ts";
import { finalize } from "../store/finalize-ops.ts";
import type { JobItem } from "../store/job-item.ts";
import { claim } from "../store/lease-ops.ts";
import { coolDown, getQueueState } from "../store/queue-state.ts";
import {
  type JobMessage,
  jobMessageProblem,
  parseJobMessage,
  seedFromMessage,
} from "../transport/job-message.ts";
import { BacklogTally } from "./backlog-tally.ts";
import { deliveredPayload, stowResult } from "./claim-check.ts";
import { handlerContext } from "./handler-context.ts";
import { Heartbeat } from "./heartbeat.ts";
import { type Decision, decideOutcome } from "./outcome.ts";
import { precheckRun } from "./precheck.ts";
import { QueueStateCache } from "./queue-state-cache.ts";
import type { Ack, InboundRecord, WorkerDeps } from "./record-types.ts";
import { runHandler } from "./run-handler.ts";
import { runUnclaimed } from "./run-unclaimed.ts";
import { toFinalization } from "./to-finalization.ts";
import { immediateVisibility, type VisibilitySink } from "./visibility-changes.ts";

/** One claimed delivery: what the run, its heartbeat and the settlement of its message need. */
export interface Delivery {
  msg: JobMessage;
  record: InboundRecord;
  queue: QueueDeclaration;
  token: string;
  leaseMs: number;
  visibility: VisibilitySink;
}

/**
 * A batch already on its way when a queue was paused (the event source stops within seconds, not at
 * once) comes back after this long instead of running.
 */
const PAUSED_RECHECK_SECONDS = 60;

/**
 * One SQS record, start to end: defer if the queue cools down → claim → validate → run with
 * heartbeats → finalize → settle the message. Every path either finishes the job, hands it back to
 * SQS with a precise visibility, or leaves it to whoever owns it now; none runs a handler twice.
 */
export class RecordProcessor {
  private readonly queueStates: QueueStateCache;

  /** Where visibility changes go when the caller batches none (the pool: each message ends alone). */
  private readonly immediate: VisibilitySink;

  constructor(private readonly deps: WorkerDeps) {
    this.immediate = immediateVisibility(deps.transport);
    this.queueStates = new QueueStateCache((q) => getQueueState(deps.store, q), deps.clock);
  }

  /** `msg`: the body already parsed by a caller that needed it first (the worker, to group its holds). */
  async process(
    record: InboundRecord,
    msg: JobMessage | undefined = parseJobMessage(record.body),
    visibility: VisibilitySink = this.immediate,
  ): Promise<Ack> {
    const admitted = await this.admit(record, msg, visibility);
    if (typeof admitted === "boolean") return admitted;
    const claimed = await this.claimOne(admitted.msg, admitted.queue, record, visibility);
    if (typeof claimed === "boolean") return claimed;
    return this.runClaimed(claimed.item, claimed.delivery);
  }

  /**
   * The checks before a claim: a body that is a job of a declared queue, a queue neither paused nor
   * cooling down. A lane without a claim runs here and now. result: the delivery's Ack when it ended
   * here, or the message and its queue (with its settings in force) to claim.
   */
  async admit(
    record: InboundRecord,
    msg: JobMessage | undefined,
    visibility: VisibilitySink = this.immediate,
  ): Promise<Ack | { msg: JobMessage; queue: QueueDeclaration }> {
    const { log, queues } = this.deps;
    if (!msg) {
      log.error("dropping a message that is not a skyforge job", {
        messageId: record.messageId,
        reason: jobMessageProblem(record.body),
      });
      return true;
    }
    const declared = queues.find((q) => q.name === msg.queue);
    if (!declared) {
      log.error("dropping a job for an undeclared queue", jobFields(msg));
      return true;
    }
    const state = await this.queueStates.get(msg.queue);
    const settings = effectiveSettings(declared, state);
    // A paused or cooling queue re-sends the message with a delay instead of claiming it: no attempt
    // and no receive count is spent, however long the pause (or a failed mapping update) lasts.
    const coolMs = (state.cooldownUntil ?? 0) - this.deps.clock.now();
    const waitSeconds = settings.paused ? PAUSED_RECHECK_SECONDS : coolMs / 1000;
    if (waitSeconds > 0) {
      await this.deps.transport.send({ message: msg, delaySeconds: waitSeconds });
      return true;
    }
    const queue = withSettings(declared, settings);
    if (msg.lane === "at-least-once" || msg.lane === "fire-and-forget") {
      return runUnclaimed(this.deps, {
        msg: { ...msg, lane: msg.lane },
        record,
        queue,
        visibility,
        throttle: (now, delaySeconds) => this.throttle(msg, now, delaySeconds),
        recordInGroups: (item) => this.recordInGroups(item),
      });
    }
    return { msg, queue };
  }

  /**
   * Takes the job for one attempt under a fresh fence. result: the claimed job and its delivery; or,
   * when the claim lost, the Ack its current state calls for (deferred, dropped, repaired).
   */
  async claimOne(
    msg: JobMessage,
    queue: QueueDeclaration,
    record: InboundRecord,
    visibility: VisibilitySink = this.immediate,
  ): Promise<Ack | { item: JobItem; delivery: Delivery }> {
    const { store, clock, metrics, log } = this.deps;
    const token = randomBytes(12).toString("base64url");
    const leaseMs = queue.leaseSeconds * 1000;
    const claimed = await claim(store, seedFromMessage(msg), token, leaseMs);
    if (!claimed.claimed) return this.notClaimed(msg, claimed.current, record, visibility);

    const item = claimed.item;
    const now = clock.now();
    metrics.count("started", item.queue, item.kind);
    metrics.time("queueLatency", item.queue, item.kind, Math.max(0, now - item.runAt));
    if (item.claimedFrom === "running") {
      metrics.count("revived", item.queue, item.kind);
      log.info("took over a job whose lease expired", jobFields(item, item.attempts));
    }
    // Common under load (the message goes out before the item write), and the recovery path when the
    // enqueue died in between: either way the claim built the job from its message.
    if (item.claimedFrom === "missing")
      log.debug("claimed before the enqueue's item write landed", jobFields(item));
    // A completion job is enqueued by the write that saw its group's last child recorded.
    if (item.completes && item.claimedFrom !== "running")
      metrics.time("groupCompletionLag", item.queue, item.kind, Math.max(0, now - item.createdAt));
    return { item, delivery: { msg, record, queue, token, leaseMs, visibility } };
  }

  /**
   * What a claimed job runs with: its kind and validated payload, or the decision that ends it
   * unrun (a cancel already requested, an expired payload object, an invalid payload...).
   */
  async prepare(item: JobItem, msg: JobMessage): Promise<Decision | { kind: AnyKind; payload: unknown }> {
    // Read after the claim, so a duplicate delivery that loses it costs no GET.
    const payloadJson = item.cancelRequested ? undefined : await deliveredPayload(this.deps.claims, msg);
    return precheckRun(this.deps.registry, item, payloadJson);
  }

  private async runClaimed(item: JobItem, delivery: Delivery): Promise<Ack> {
    const started = this.deps.clock.now();
    const ready = await this.prepare(item, delivery.msg);
    const decision = "outcome" in ready ? ready : await this.run(item, ready.kind, ready.payload, delivery);
    this.deps.metrics.time("runDuration", item.queue, item.kind, this.deps.clock.now() - started);
    return this.settle(item, decision, delivery);
  }

  private async run(item: JobItem, kind: AnyKind, payload: unknown, delivery: Delivery): Promise<Decision> {
    const { token, leaseMs, record, queue } = delivery;
    const { store, transport, log } = this.deps;
    const controller = new AbortController();
    const heartbeat = new Heartbeat(
      {
        id: item.id,
        queue: item.queue,
        token,
        receiptHandle: record.receiptHandle,
        leaseMs,
        leaseUntil: item.leaseUntil ?? this.deps.clock.now() + leaseMs,
      },
      store,
      transport,
      (cause) => controller.abort(cause),
      log,
    );
    const timeoutSeconds = item.timeoutSeconds ?? kind.timeoutSeconds;
    const unregister = this.deps.running?.register(item.id, (cause) => controller.abort(cause));
    heartbeat.start();
    try {
      const completion = item.completes ? await this.deps.groups.completionFor(item) : undefined;
      const end = await runHandler(
        kind,
        payload,
        handlerContext(this.deps, item, token, () => heartbeat.beat(), completion),
        controller,
        timeoutSeconds * 1000,
      );
      return decideOutcome(end, {
        attempt: item.attempts,
        maxAttempts: item.maxAttempts,
        backoff: kind.backoff ?? queue.backoff,
        timeoutSeconds,
        ...(this.deps.random ? { random: this.deps.random } : {}),
      });
    } finally {
      await heartbeat.stop();
      unregister?.();
    }
  }

  /**
   * Writes the decision under the fence, then settles the message to match. A batch key's job that
   * ended leaves its key's backlog: counted in `tally` when the caller writes a call's at once.
   */
  async settle(item: JobItem, decision: Decision, delivery: Delivery, tally?: BacklogTally): Promise<Ack> {
    const { queue, token, record } = delivery;
    const { store, clock, metrics, log } = this.deps;
    const fields = jobFields(item, item.attempts);
    if (decision.outcome === "abandon") {
      metrics.count("leaseLost", item.queue, item.kind);
      log.warn("lease lost mid-run; the new owner finishes the job", fields);
      return false;
    }
    const now = clock.now();
    let ending = toFinalization(decision, queue, now);
    if (ending.outcome === "done") {
      const job = { id: item.id, attempt: item.attempts };
      ending = {
        ...ending,
        result: await stowResult(this.deps.claims, job, ending.result, now, ending.expiresAt),
      };
    }
    let result = await finalize(store, item, token, ending);
    if (!result.finalized && result.reason === "cancel_requested") {
      decision = { outcome: "cancelled", error: "cancelled on request" };
      result = await finalize(store, item, token, toFinalization(decision, queue, now));
    }
    if (!result.finalized) {
      metrics.count("leaseLost", item.queue, item.kind);
      log.warn("lease lost before finalize; leaving the job to its new owner", fields);
      return false;
    }
    if (!(await this.recordInGroups(result.item))) return false;
    if (result.item.inBacklog) {
      const own = tally ?? new BacklogTally();
      own.note(result.item);
      if (!tally)
        await own
          .flush(store)
          .catch((err) =>
            log.warn("could not count a job out of its key's backlog", { ...fields, error: String(err) }),
          );
    }
    switch (decision.outcome) {
      case "done":
        metrics.count("succeeded", item.queue, item.kind);
        log.debug("job done", fields);
        return true;
      case "dead":
        metrics.count("dead", item.queue, item.kind);
        log.warn("job dead", { ...fields, error: decision.error });
        return true;
      case "cancelled":
        metrics.count("cancelled", item.queue, item.kind);
        log.info("job cancelled", fields);
        return true;
      case "retry":
        metrics.count("retried", item.queue, item.kind);
        log.info("job will retry", { ...fields, delaySeconds: decision.delaySeconds, error: decision.error });
        await delivery.visibility.change(item.queue, record.receiptHandle, decision.delaySeconds);
        return false;
      case "reschedule":
        metrics.count("retried", item.queue, item.kind);
        log.info("job rescheduled beyond SQS's reach", { ...fields, delaySeconds: decision.delaySeconds });
        return true;
      case "released":
        metrics.count("released", item.queue, item.kind);
        log.info("job handed back at shutdown", fields);
        await delivery.visibility.change(item.queue, record.receiptHandle, 0);
        return false;
      case "throttled": {
        metrics.count("throttled", item.queue, item.kind);
        await this.throttle(delivery.msg, now, decision.delaySeconds);
        log.info("queue throttled", { ...fields, delaySeconds: decision.delaySeconds });
        return true;
      }
    }
  }

  /**
   * A throttle: the whole queue cools down (this process learns it at once), and the job's message is
   * sent afresh with the delay, so the old one's receive count doesn't creep towards the DLQ (and a
   * lane without a claim, whose attempt is that count, gets the attempt back).
   */
  private async throttle(msg: JobMessage, now: number, delaySeconds: number): Promise<void> {
    const until = now + delaySeconds * 1000;
    this.queueStates.noteCooldown(msg.queue, until);
    await coolDown(this.deps.store, msg.queue, until);
    await this.deps.transport.send({ message: msg, delaySeconds });
  }

  /**
   * A group's child or completion job that ended: its group hears of it (docs/architecture.md §15).
   * false when that failed: the message stays, and its next delivery finds the job finished and tries
   * again, so a job's end always reaches its group.
   */
  private async recordInGroups(item: JobItem): Promise<Ack> {
    if (!item.member && !item.completes) return true;
    if (!isTerminal(item.status)) return true;
    try {
      await this.deps.groups.recordEnd(item);
      return true;
    } catch (err) {
      this.deps.log.warn("could not record a job's end in its group; its next delivery will", {
        ...jobFields(item),
        error: String(err),
      });
      return false;
    }
  }

  /** A claim that lost: decide from the job's current state what to do with this delivery. */
  private async notClaimed(
    msg: JobMessage,
    current: JobItem | undefined,
    record: InboundRecord,
    visibility: VisibilitySink,
  ): Promise<Ack> {
    const { clock, metrics, log } = this.deps;
    const now = clock.now();
    if (!current || isTerminal(current.status)) {
      if (current) metrics.count("duplicateDeliveries", msg.queue, msg.kind);
      // A crash between the finalize and the group's record leaves the message: this delivery repairs it.
      return current ? this.recordInGroups(current) : true;
    }
    if (current.status === "running") {
      // Another worker holds a live lease: come back when it would have expired, never run alongside.
      metrics.count("duplicateDeliveries", msg.queue, msg.kind);
      log.info("duplicate delivery of a running job; deferring it", jobFields(msg));
      await visibility.change(
        msg.queue,
        record.receiptHandle,
        ((current.leaseUntil ?? now) - now) / 1000 + 1,
      );
      return false;
    }
    if (current.status === "scheduled" && current.runAt - now > MAX_VISIBILITY_SECONDS * 1000) return true;
    await visibility.change(msg.queue, record.receiptHandle, (current.runAt - now) / 1000);
    return false;
  }
}
