import type { QueueDeclaration } from "../declarations/queue-declaration.ts";
import { MAX_VISIBILITY_SECONDS } from "../limits.ts";
import type { Log } from "../observability/log.ts";
import type { CountMetric } from "../observability/metric-names.ts";
import { promotionHoldUntil } from "../ops/promote.ts";
import { retentionExpiry } from "../retention.ts";
import type { Finalization } from "../store/finalize-ops.ts";
import type { Decision } from "./outcome.ts";
import type { Ack, WorkerDeps } from "./record-types.ts";
import type { VisibilitySink } from "./visibility-changes.ts";

/** A decision the run's owner settles (an abandoned run leaves its job to the new owner). */
export type Settled = Exclude<Decision, { outcome: "abandon" }>;
type Outcome = Settled["outcome"];
type Of<O extends Outcome> = Extract<Settled, { outcome: O }>;

interface OutcomeRow<D extends Settled> {
  /** What the store records: terminal outcomes keep the queue's retention as their TTL. */
  write(d: D, queue: QueueDeclaration, now: number): Finalization;
  metric: CountMetric;
  log: { level: keyof Log; message: string; fields?: (d: D) => Record<string, unknown> };
  /** The message stays on the queue with this visibility (seconds); absent: it is finished with. */
  visibility?: (d: D) => number;
  /** The whole queue cools down and the message is sent afresh with the delay. */
  throttles?: true;
  /** The decision a lane without a claim keeps instead, when it has no such state (§16). */
  withoutClaim?: (d: D) => Settled;
}

/**
 * Each outcome of a run, once: its store write, metric, log line and what becomes of its message
 * (docs/architecture.md §6). The claimed lane finalizes the write under its fence; the lanes without
 * a claim record the ones they keep (docs/architecture.md §16).
 */
const OUTCOMES: { [O in Outcome]: OutcomeRow<Of<O>> } = {
  done: {
    write: (d, queue, now) => ({
      outcome: "done",
      result: { json: d.result },
      expiresAt: retentionExpiry(now, queue.retentionDays.done),
    }),
    metric: "succeeded",
    log: { level: "debug", message: "job done" },
  },
  dead: {
    write: (d, queue, now) => ({
      outcome: "dead",
      error: d.error,
      expiresAt: retentionExpiry(now, queue.retentionDays.dead),
      ...(d.unstarted ? { unstarted: true as const } : {}),
    }),
    metric: "dead",
    log: { level: "warn", message: "job dead", fields: (d) => ({ error: d.error }) },
  },
  paused: {
    write: (d) => ({ outcome: "paused", error: d.error }),
    metric: "paused",
    log: { level: "warn", message: "job paused for an operator", fields: (d) => ({ error: d.error }) },
    // No item to wait in without a claim (the validator refuses the setting there): it ends dead.
    withoutClaim: (d) => ({ outcome: "dead", error: d.error }),
  },
  cancelled: {
    write: (d, queue, now) => ({
      outcome: "cancelled",
      expiresAt: retentionExpiry(now, queue.retentionDays.dead),
      ...(d.error ? { error: d.error } : {}),
    }),
    metric: "cancelled",
    log: { level: "info", message: "job cancelled" },
    // No cancelled status without a claim: a cancel ends the job dead.
    withoutClaim: (d) => ({ outcome: "dead", error: d.error ?? "cancelled" }),
  },
  retry: {
    write: (d, _queue, now) => ({ outcome: "retry", runAt: now + d.delaySeconds * 1000, error: d.error }),
    metric: "retried",
    log: {
      level: "info",
      message: "job will retry",
      fields: (d) => ({ delaySeconds: d.delaySeconds, error: d.error }),
    },
    visibility: (d) => d.delaySeconds,
    withoutClaim: (d) => ({ ...d, delaySeconds: Math.min(d.delaySeconds, MAX_VISIBILITY_SECONDS) }),
  },
  reschedule: {
    write: (d, _queue, now) => ({
      outcome: "reschedule",
      runAt: now + d.delaySeconds * 1000,
      error: d.error,
    }),
    metric: "retried",
    log: {
      level: "info",
      message: "job rescheduled beyond SQS's reach",
      fields: (d) => ({ delaySeconds: d.delaySeconds }),
    },
    // No scheduled index without a claim: the retry waits as long as SQS can hide its message.
    withoutClaim: (d) => ({
      ...d,
      outcome: "retry",
      delaySeconds: Math.min(d.delaySeconds, MAX_VISIBILITY_SECONDS),
    }),
  },
  released: {
    write: (_d, _queue, now) => ({ outcome: "released", runAt: now }),
    metric: "released",
    log: { level: "info", message: "job handed back at shutdown" },
    visibility: () => 0,
  },
  suspend: {
    write: ({ suspension: s }, _queue, now) => ({
      outcome: "suspend",
      runAt: s.waiting.until,
      waiting: s.waiting,
      ...(s.step ? { step: s.step } : {}),
      ...(s.wakesByMessage(now) ? { holdUntil: promotionHoldUntil(s.waiting.until, now) } : {}),
    }),
    metric: "suspended",
    log: {
      level: "info",
      message: "job waits",
      fields: ({ suspension: s }) => ({
        waitingFor: s.waiting.for,
        until: new Date(s.waiting.until).toISOString(),
      }),
    },
    // Its next run comes from a wake-up message, a token, an event or the reaper: this message is done.
    withoutClaim: () => ({ outcome: "dead", error: "a durable wait needs a claimed run" }),
  },
  throttled: {
    write: (d, _queue, now) => ({
      outcome: "throttled",
      runAt: now + d.delaySeconds * 1000,
      reason: d.reason,
    }),
    metric: "throttled",
    log: { level: "info", message: "queue throttled", fields: (d) => ({ delaySeconds: d.delaySeconds }) },
    throttles: true,
  },
};

const rowOf = <D extends Settled>(d: D) => OUTCOMES[d.outcome] as unknown as OutcomeRow<D>;

/** The store write of a decision (the table's first column). */
export function toFinalization(d: Settled, queue: QueueDeclaration, now: number): Finalization {
  return rowOf(d).write(d, queue, now);
}

/**
 * A decision as a lane without a claim keeps it (docs/architecture.md §16): no cancelled status,
 * no scheduled index, no lease to lose (an abandoned run is handed back).
 */
export function withoutClaim(d: Decision): Settled {
  if (d.outcome === "abandon") return { outcome: "released" };
  return rowOf(d).withoutClaim?.(d) ?? d;
}

/** Where a settled run's message is: what the table's last columns act on. */
export interface SettledMessage {
  queue: string;
  kind: string;
  receiptHandle: string;
  /** The job's log fields. */
  fields: Record<string, unknown>;
  visibility: VisibilitySink;
  /** Cools the queue down and sends the message afresh after `delaySeconds`. */
  throttle(delaySeconds: number): Promise<void>;
}

/**
 * After the store write: the outcome's metric and log line, then its message kept on the queue
 * with a visibility, sent afresh after a cool-down, or finished with. result: the message's Ack.
 */
export async function reportOutcome(
  deps: Pick<WorkerDeps, "metrics" | "log">,
  d: Settled,
  at: SettledMessage,
): Promise<Ack> {
  const row = rowOf(d);
  deps.metrics.count(row.metric, at.queue, at.kind);
  deps.log[row.log.level](row.log.message, { ...at.fields, ...row.log.fields?.(d) });
  if (row.throttles && "delaySeconds" in d) await at.throttle(d.delaySeconds);
  if (!row.visibility) return true;
  await at.visibility.change(at.queue, at.receiptHandle, row.visibility(d));
  return false;
}
