import pLimit from "p-limit";
import type { QueueDeclaration } from "../declarations/queue-declaration.ts";
import { MAX_DELAY_SECONDS } from "../limits.ts";
import { errorFields, jobFields } from "../observability/log.ts";
import { effectiveSettings } from "../queue-control/settings.ts";
import { retentionExpiry } from "../retention.ts";
import { BacklogTally } from "../runtime/backlog-tally.ts";
import type { Engine } from "../services/engine-services.ts";
import { markQueued } from "../store/enqueue-ops.ts";
import type { JobItem } from "../store/job-item.ts";
import { getQueueState } from "../store/queue-state.ts";
import { beginPromotion, deadLetter, queryIndexBefore } from "../store/reaper-ops.ts";
import { formatVersionOf, readsFormat } from "../store/stored-formats.ts";
import { parseJobMessage, seedFromMessage } from "../transport/job-message.ts";
import { outgoingJob, promotionHoldUntil } from "./promote.ts";
import { QueueAdmin } from "./queue-admin.ts";
import { STALE_SWEEP_PASS_MS, sweepStaleMessages } from "./stale-message-sweep.ts";

/** SQS holds a message for at most 15 minutes of delay: promote what falls due within that. */
export const PROMOTION_HORIZON_MS = MAX_DELAY_SECONDS * 1000;
export const DEAD_LETTER_REASON = "exceeded receive count";

export interface ReaperOptions {
  /** Bounds one run's work per queue; the next tick carries on. */
  maxPromotionsPerQueue?: number;
  maxDeadLettersPerQueue?: number;
  /** The stale-message sweep's settings (lib/ops/stale-message-sweep.ts). */
  tickMs?: number;
  staleSweepPassMs?: number;
  staleMessageAfterMs?: number;
  maxStaleSweepPages?: number;
  /** How long the look at flow keys' places may take (lib/flow/flow-heal.ts); the next run goes on. */
  flowHealBudgetMs?: number;
}

export interface ReaperReport {
  /** Scheduled jobs whose message went out this run. */
  promoted: number;
  /** Due scheduled jobs another promotion held, or that moved on before this one could take them. */
  promotionsSkipped: number;
  /** DLQ messages whose job became dead. */
  deadLettered: number;
  /** DLQ messages of jobs that had finished, or that wait for a retry with a live message: deleted. */
  deadLetterDuplicates: number;
  /** DLQ messages of jobs a worker holds a live lease on: left for a later run. */
  deadLettersDeferred: number;
  /** DLQ messages that are not skyforge jobs: left in place for an operator. */
  deadLettersUnrecognized: number;
  /** Event sources made to match their queue's recorded pause/concurrency. */
  eventSourcesRepaired: number;
  /** Items the stale-message sweep read this run. */
  staleScanned: number;
  /** Jobs whose message may have outlived SQS's retention, sent a fresh one. */
  staleResent: number;
  /** Job groups looked at (expiry, repair after a crash, a completion or cancel to finish). */
  groupsChecked: number;
  groupsExpired: number;
  groupRepairs: number;
  /** Flow keys with parked jobs looked at this run (from where the last run stopped, §20). */
  flowKeysChecked: number;
  /** Parked jobs of flow keys sent on: places their keys' ended runs left held (§20). */
  flowJobsSent: number;
}

export type ReaperDeps = Pick<
  Engine,
  | "store"
  | "claims"
  | "transport"
  | "queues"
  | "clock"
  | "metrics"
  | "log"
  | "eventSources"
  | "groups"
  | "durable"
  | "flow"
  | "registry"
> &
  Partial<Pick<Engine, "realtime">>;

/**
 * One reaper tick (docs/architecture.md §7): promote due scheduled jobs, drain the DLQs, repair event
 * sources, and re-send the messages of jobs queued so long that SQS may drop them.
 * Safe to run twice at once: each promotion and each dead-letter is one conditional write, so two
 * reapers split the work instead of doubling it. Expired leases need no pass here: their messages
 * come back on their own and the claim takes them over (counted as `revived` by the worker).
 */
export async function runReaper(deps: ReaperDeps, options: ReaperOptions = {}): Promise<ReaperReport> {
  const report: ReaperReport = {
    promoted: 0,
    promotionsSkipped: 0,
    deadLettered: 0,
    deadLetterDuplicates: 0,
    deadLettersDeferred: 0,
    deadLettersUnrecognized: 0,
    eventSourcesRepaired: 0,
    staleScanned: 0,
    staleResent: 0,
    groupsChecked: 0,
    groupsExpired: 0,
    groupRepairs: 0,
    flowKeysChecked: 0,
    flowJobsSent: 0,
  };
  for (const queue of deps.queues) {
    await promoteDue(deps, queue, report, options.maxPromotionsPerQueue ?? 1000);
    if (deps.transport.hasDlq(queue.name))
      await drainDeadLetters(deps, queue, report, options.maxDeadLettersPerQueue ?? 100);
  }
  try {
    report.eventSourcesRepaired = await new QueueAdmin(deps).repairEventSources();
  } catch (err) {
    deps.log.error("event source repair failed; the next tick tries again", errorFields(err));
  }
  if ((options.staleSweepPassMs ?? STALE_SWEEP_PASS_MS) > 0) {
    try {
      const swept = await sweepStaleMessages(deps, options);
      report.staleScanned = swept.scanned;
      report.staleResent = swept.resent;
    } catch (err) {
      // Its slice comes round again next pass, days before any message it protects could go.
      deps.log.error("stale-message sweep failed; its slice is swept again next pass", {
        ...errorFields(err),
      });
    }
  }
  try {
    Object.assign(report, await deps.groups.check());
  } catch (err) {
    deps.log.error("group checks failed; the next tick tries again", errorFields(err));
  }
  try {
    const healed = await deps.flow.heal(options.flowHealBudgetMs);
    report.flowKeysChecked = healed.keys;
    report.flowJobsSent = healed.sent;
  } catch (err) {
    deps.log.error("the look at flow keys' places failed; the next tick tries again", errorFields(err));
  }
  deps.metrics.flush();
  return report;
}

async function promoteDue(
  deps: ReaperDeps,
  queue: QueueDeclaration,
  report: ReaperReport,
  budget: number,
): Promise<void> {
  const now = deps.clock.now();
  const horizon = now + PROMOTION_HORIZON_MS;
  const inFlight = pLimit(4);
  let left = budget;
  await Promise.all(
    Array.from({ length: deps.store.layout.indexShards }, (_, shard) =>
      inFlight(async () => {
        let startKey: Record<string, unknown> | undefined;
        do {
          // Reserve before reading, so shards running side by side can't overshoot the budget.
          const take = Math.min(100, left);
          if (take <= 0) return;
          left -= take;
          const page = await queryIndexBefore(
            deps.store,
            { queue: queue.name, status: "scheduled", shard },
            horizon,
            take,
            startKey,
          );
          left += take - page.items.length;
          await promotePage(deps, page.items, now, report);
          startKey = page.next;
        } while (startKey);
      }),
    ),
  );
}

/**
 * A durable job waiting for a token or an event is due at its timeout, not before: promoted ahead
 * of it (with a delay, as other jobs due within the horizon are), it would be queued, and its token
 * or event could no longer resume it (docs/architecture.md §22). Its timeout's run comes from the
 * first reaper run after it.
 */
const waitsForCaller = (seen: JobItem, now: number) =>
  seen.waiting !== undefined && seen.waiting.for !== "sleep" && seen.runAt > now;

/**
 * Holds each job of a page (one conditional write each), sends the held ones' messages ten to a
 * request, then takes the sent ones out of the index. A job whose send failed stays held and
 * scheduled: the next run after its hold lapses tries again.
 */
async function promotePage(deps: ReaperDeps, items: JobItem[], now: number, report: ReaperReport) {
  const writes = pLimit(16);
  const held = (
    await Promise.all(
      items.map((seen) =>
        writes(() =>
          // A hold we can see is live costs nothing to skip; a stale read is caught by the condition.
          // A job a newer version wrote is left to it: its message would be built from a misread (§24).
          (seen.promotingUntil !== undefined && seen.promotingUntil >= now) ||
          waitsForCaller(seen, now) ||
          !readsFormat("job", seen)
            ? Promise.resolve(undefined)
            : beginPromotion(deps.store, seen.id, seen.runAt, promotionHoldUntil(seen.runAt, now)),
        ),
      ),
    )
  ).filter((item): item is JobItem => item !== undefined);
  report.promotionsSkipped += items.length - held.length;
  if (held.length === 0) return;
  const outgoing = await Promise.all(held.map((item) => writes(() => outgoingJob(deps, item))));
  const failed = await deps.transport.sendBatch(outgoing);
  await Promise.all(
    held
      .filter((item) => !failed.has(item.id))
      .map((item) =>
        writes(async () => {
          await markQueued(deps.store, item.id, item.runAt);
          report.promoted += 1;
          deps.metrics.count("promoted", item.queue, item.kind);
          deps.log.debug("promoted a scheduled job", jobFields(item));
        }),
      ),
  );
  if (failed.size > 0)
    deps.log.warn("SQS refused some promotions; they are retried once their hold lapses", {
      count: failed.size,
    });
}

async function drainDeadLetters(
  deps: ReaperDeps,
  queue: QueueDeclaration,
  report: ReaperReport,
  budget: number,
): Promise<void> {
  const { store, transport, clock, metrics, log } = deps;
  const retention = effectiveSettings(queue, await getQueueState(store, queue.name)).retentionDays.dead;
  for (let seen = 0; seen < budget; ) {
    const messages = await transport.receive(queue.name, 10, 0, "dlq");
    if (messages.length === 0) return;
    seen += messages.length;
    for (const m of messages) {
      const receipt = m.ReceiptHandle as string;
      const msg = parseJobMessage(m.Body ?? "");
      if (!msg) {
        report.deadLettersUnrecognized += 1;
        log.warn("a DLQ message is not a skyforge job; leaving it for an operator", {
          queue: queue.name,
          messageId: m.MessageId,
        });
        continue;
      }
      const result = await deadLetter(
        store,
        seedFromMessage(msg),
        DEAD_LETTER_REASON,
        retentionExpiry(clock.now(), retention),
      );
      if (result.marked) {
        report.deadLettered += 1;
        metrics.count("deadLettered", msg.queue, msg.kind);
        metrics.count("dead", msg.queue, msg.kind);
        log.warn("job dead: its message exceeded the receive count", jobFields(result.item));
        deps.realtime?.ended(result.item);
        // Its group hears of it before the message goes: a crash here repeats this, idempotently.
        await deps.groups.recordEnd(result.item);
        await deps.durable.childEnded(result.item);
        const tally = new BacklogTally();
        tally.note(result.item);
        await tally.flush(store);
        await transport.delete(queue.name, receipt, "dlq");
      } else if (result.current && !readsFormat("job", result.current)) {
        // A rollback met a job a newer version wrote (docs/architecture.md §24): that version drains it.
        report.deadLettersDeferred += 1;
        log.error(
          "leaving a dead-lettered job in the DLQ: its item is in a newer format than this version reads",
          {
            ...jobFields(msg),
            formatVersion: formatVersionOf(result.current),
          },
        );
      } else if (result.current?.status !== "running") {
        // Finished already, or waiting for a retry whose own message is on its way: a stale copy.
        report.deadLetterDuplicates += 1;
        if (result.current) await deps.groups.recordEnd(result.current);
        if (result.current) await deps.durable.childEnded(result.current);
        await transport.delete(queue.name, receipt, "dlq");
      } else {
        // A worker holds a live lease: its run decides. If it dies, the next run here marks the job.
        report.deadLettersDeferred += 1;
      }
    }
  }
}
