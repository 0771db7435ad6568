import type { Log } from "../observability/log.ts";
import type { SqsTransport } from "../transport/sqs-transport.ts";
import { renewalIntervalMs } from "./heartbeat.ts";

/** A received message as the consumer holds it. */
export interface HeldMessage {
  messageId: string;
  receiptHandle: string;
}

/**
 * How long one hold hides a message: one lease, plus a second. A job claimed just after the hold
 * has a lease that ends a moment after the hold does; the extra second lets the message come back
 * once that lease has ended, so the next consumer takes the job over at once instead of finding a
 * live lease and deferring (docs/architecture.md §6).
 */
export function holdSeconds(leaseMs: number): number {
  return Math.ceil(leaseMs / 1000) + 1;
}

type VisibilityDeps = { transport: Pick<SqsTransport, "changeVisibilityBatch">; log: Log };

/**
 * Sets each message's visibility to `seconds`, ten per request; the entries SQS refuses are logged
 * under `refused`, not thrown: each caller's message comes back on its own, sooner or later.
 */
export async function setVisibility(
  deps: VisibilityDeps,
  queue: string,
  messages: readonly HeldMessage[],
  seconds: number,
  refused: string,
): Promise<void> {
  const failures = await deps.transport.changeVisibilityBatch(
    queue,
    messages.map((m) => ({ id: m.messageId, receiptHandle: m.receiptHandle, seconds })),
  );
  logRefused(deps.log, refused, queue, failures);
}

function logRefused(
  log: Log,
  refused: string,
  queue: string,
  failures: readonly { id: string; code: string }[],
) {
  if (failures.length === 0) return;
  log.warn(refused, { queue, failures: failures.map((f) => ({ messageId: f.id, code: f.code })) });
}

// A message that could not be hidden may be delivered to another consumer meanwhile: the claim keeps
// the job from running twice, so this costs a duplicate delivery at most.
const HIDE_REFUSED = "could not keep received messages hidden; they may be delivered again";

export interface UnstartedMessagesOptions {
  transport: Pick<SqsTransport, "changeVisibilityBatch">;
  queue: string;
  leaseMs: number;
  log: Log;
}

/**
 * Received messages of one queue that have not started running yet. SQS hands a message out
 * hidden for the queue's visibility timeout (the worker timeout + the batching window + 10 s: 911 s
 * on `default`); a consumer that died before the run's first heartbeat would leave it hidden that long. So a received batch is
 * hidden for about one lease at once, in one batched request, and every third of the lease the
 * messages still waiting (for a record slot, for a free child) are hidden again, all in one batched
 * request. Once a message starts, its run's heartbeat takes over and it leaves this set.
 */
export class UnstartedMessages {
  private readonly held = new Map<string, HeldMessage>();
  private readonly inFlight = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  private readonly options: UnstartedMessagesOptions;

  constructor(options: UnstartedMessagesOptions) {
    this.options = options;
  }

  get size(): number {
    return this.held.size;
  }

  /**
   * Hides a freshly received batch for one lease (one request per ten) and keeps it hidden until
   * each message starts. `receivedHidden`: the receive itself asked for holdSeconds of visibility
   * (the pool does; Lambda's event source can't), so the first hide is already done, for free.
   */
  async hold(messages: readonly HeldMessage[], { receivedHidden = false } = {}): Promise<void> {
    if (this.stopped || messages.length === 0) return;
    for (const m of messages) this.held.set(m.receiptHandle, m);
    if (!this.timer) {
      this.timer = setInterval(() => this.extendWaiting(), renewalIntervalMs(this.options.leaseMs));
      this.timer.unref();
    }
    if (!receivedHidden) await this.track(this.hide(messages));
  }

  /**
   * The message starts (its heartbeat takes over) or leaves: it is not hidden again. Resolves once
   * a hold already on its way has landed, so none lands after the run has settled the message
   * (a retry's visibility, a hand-back's 0).
   */
  async release(receiptHandle: string): Promise<void> {
    this.held.delete(receiptHandle);
    if (this.held.size === 0) this.clearTimer();
    await Promise.all(this.inFlight);
  }

  /** No more holds; resolves once the one on its way has landed, with the messages still waiting. */
  async stop(): Promise<HeldMessage[]> {
    this.stopped = true;
    this.clearTimer();
    const waiting = [...this.held.values()];
    this.held.clear();
    await Promise.all(this.inFlight);
    return waiting;
  }

  private extendWaiting(): void {
    // One hold at a time: a tick while the last one is still out is skipped, not queued behind it.
    if (this.stopped || this.held.size === 0 || this.inFlight.size > 0) return;
    void this.track(this.hide([...this.held.values()]));
  }

  private async hide(messages: readonly HeldMessage[]): Promise<void> {
    const { queue, leaseMs, log } = this.options;
    try {
      await setVisibility(this.options, queue, messages, holdSeconds(leaseMs), HIDE_REFUSED);
    } catch (err) {
      logRefused(
        log,
        HIDE_REFUSED,
        queue,
        messages.map((m) => ({ id: m.messageId, code: String(err) })),
      );
    }
  }

  private track(work: Promise<void>): Promise<void> {
    const tracked = work.finally(() => this.inFlight.delete(tracked));
    this.inFlight.add(tracked);
    return tracked;
  }

  private clearTimer(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
