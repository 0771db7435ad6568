import { StoredFormatTooNew } from "../errors.ts";
import { jobFields } from "../observability/log.ts";
import { effectiveSettings, withSettings } from "../queue-control/settings.ts";
import { coolDown, getQueueState } from "../store/queue-state.ts";
import { STORED_FORMATS } from "../store/stored-formats.ts";
import { type JobMessage, jobMessageProblem, newerMessageVersion } from "../transport/job-message.ts";
import type { Admitted } from "./delivery.ts";
import { recordEndInGroups } from "./group-end.ts";
import { QueueStateCache } from "./queue-state-cache.ts";
import type { Ack, InboundRecord, WorkerDeps } from "./record-types.ts";
import { runUnclaimed } from "./run-unclaimed.ts";
import type { VisibilitySink } from "./visibility-changes.ts";

/**
 * A batch already on its way when a queue was paused (the event source stops within seconds, not at
 * once) comes back after this long instead of running.
 */
const PAUSED_RECHECK_SECONDS = 60;

/** The checks before a claim, and the queue cool-down a throttled run starts (both read the queue's state). */
export class Admission {
  private readonly queueStates: QueueStateCache;

  private readonly deps: WorkerDeps;

  constructor(deps: WorkerDeps) {
    this.deps = deps;
    this.queueStates = new QueueStateCache((q) => getQueueState(deps.store, q), deps.clock);
  }

  /**
   * A body that is a job of a declared queue, a queue neither paused nor cooling down. A lane
   * without a claim runs here and now. result: the delivery's Ack when it ended here, or the
   * message and its queue (with its settings in force) to claim.
   */
  async admit(
    record: InboundRecord,
    msg: JobMessage | undefined,
    visibility: VisibilitySink,
  ): Promise<Ack | Admitted> {
    const { log, queues } = this.deps;
    if (!msg) {
      // A message a newer version sent (a rollback): fail the delivery with the reason, so the message
      // stays in the queue (then its DLQ) for that version, rather than drop it (docs/architecture.md §24).
      const newer = newerMessageVersion(record.body);
      if (newer !== undefined)
        throw new StoredFormatTooNew("message", newer, STORED_FORMATS.message, `message ${record.messageId}`);
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
        recordInGroups: (item) => recordEndInGroups(this.deps, item),
      });
    }
    return { msg, queue };
  }

  /**
   * A throttle: the whole queue cools down (this process learns it at once), and the job's message is
   * sent afresh with the delay, so the old one's receive count doesn't creep towards the DLQ (and a
   * lane without a claim, whose attempt is that count, gets the attempt back).
   */
  async throttle(msg: JobMessage, now: number, delaySeconds: number): Promise<void> {
    const until = now + delaySeconds * 1000;
    this.queueStates.noteCooldown(msg.queue, until);
    await coolDown(this.deps.store, msg.queue, until);
    await this.deps.transport.send({ message: msg, delaySeconds });
  }
}
