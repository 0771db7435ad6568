import type { Message } from "@aws-sdk/client-sqs";
import type { QueueDeclaration } from "../declarations/queue-declaration.ts";
import { ConfigError } from "../errors.ts";
import { agedArrival, isCritical } from "../job/priority.ts";
import { errorFields } from "../observability/log.ts";
import { QueueStateCache } from "../runtime/queue-state-cache.ts";
import type { WorkerDeps } from "../runtime/record-types.ts";
import {
  type HeldMessage,
  holdSeconds,
  setVisibility,
  UnstartedMessages,
} from "../runtime/unstarted-messages.ts";
import { getQueueState } from "../store/queue-state.ts";
import { parseJobMessage } from "../transport/job-message.ts";
import type { Waiting } from "./intake.ts";

export interface PoolReceiverOptions {
  queues: readonly QueueDeclaration[];
  /** ReceiveMessage long-poll; 20 s on AWS. */
  waitSeconds?: number;
  /** How often a paused queue is checked again. */
  pausedRecheckMs?: number;
  /** How long a read of a queue's pause state is trusted. */
  queueStateTtlMs?: number;
  /** How many messages `queue` may take in now (the intake's room). */
  room: (queue: string) => number;
  /** Takes what one receive brought in, held hidden until each starts or is given back. */
  admit: (received: readonly Waiting[]) => void;
}

/**
 * The pool's side of SQS: one long-poll loop per queue, which receives only while the queue has
 * room and is not paused, and waits meanwhile (for room to free up, or for the pause's recheck);
 * the hold that keeps received, unstarted messages hidden a lease at a time; and the hand-back that
 * makes received, unclaimed messages visible again at once.
 */
export class PoolReceiver {
  private readonly queueStates: QueueStateCache;
  /** Per queue: received messages not running yet, kept hidden about one lease at a time. */
  private readonly unstarted = new Map<string, UnstartedMessages>();
  private readonly loops: Promise<void>[] = [];
  private roomFreed = Promise.withResolvers<void>();
  private readonly stopped = Promise.withResolvers<void>();
  private stopping = false;
  /** Messages given back outside the drain's own return: a late poll's, a call's that got no child. */
  private givenBackLate = 0;

  private readonly deps: WorkerDeps;
  private readonly options: PoolReceiverOptions;

  constructor(deps: WorkerDeps, options: PoolReceiverOptions) {
    this.deps = deps;
    this.options = options;
    this.queueStates = new QueueStateCache(
      (q) => getQueueState(deps.store, q),
      deps.clock,
      options.queueStateTtlMs,
    );
    for (const q of options.queues) {
      const leaseMs = q.leaseSeconds * 1000;
      const hold = { transport: deps.transport, queue: q.name, leaseMs, log: deps.log };
      this.unstarted.set(q.name, new UnstartedMessages(hold));
    }
  }

  start(): void {
    for (const q of this.options.queues) this.loops.push(this.receiveLoop(q));
  }

  /** Whether the pool has begun to stop: nothing is received, started or reserved from then on. */
  get isStopping(): boolean {
    return this.stopping;
  }

  /** Wakes the loops that wait for room (a piece of work ended). */
  roomMayHaveFreed(): void {
    this.roomFreed.resolve();
    this.roomFreed = Promise.withResolvers<void>();
  }

  unstartedOf(queue: string): UnstartedMessages {
    const unstarted = this.unstarted.get(queue);
    // A pool kind on a queue the pool was not given: the pool's configuration disagrees with itself.
    if (!unstarted) throw new ConfigError(`the pool does not read queue ${queue}`);
    return unstarted;
  }

  /** Gives back messages the pool won't start now that it stops (counted in `returnedLate`). */
  async giveBackLate(queue: string, messages: readonly HeldMessage[]): Promise<void> {
    this.givenBackLate += await this.giveBack(queue, messages);
  }

  /** Messages given back by `giveBackLate` so far. */
  get returnedLate(): number {
    return this.givenBackLate;
  }

  /**
   * The start of the drain: the loops stop receiving (a long poll in progress is not aborted: SQS
   * would still hand its messages to the closed connection, hiding them for a whole visibility
   * timeout; it ends within `waitSeconds` and its messages go straight back). Stops at once;
   * resolves once every loop has ended.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    this.stopped.resolve();
    this.roomFreed.resolve();
    await Promise.allSettled(this.loops);
  }

  /**
   * Stops hiding the waiting messages (a hold on its way lands first), then gives back what
   * `waiting()` returns once they stopped; the number given back.
   */
  async returnWaiting(waiting: () => readonly Waiting[]): Promise<number> {
    await Promise.all([...this.unstarted.values()].map((u) => u.stop()));
    const byQueue = Map.groupBy(waiting(), (w) => w.queue);
    const counts = await Promise.all(
      [...byQueue].map(([queue, ws]) =>
        this.giveBack(
          queue,
          ws.map((w) => w.record),
        ),
      ),
    );
    return counts.reduce((a, b) => a + b, 0);
  }

  private async receiveLoop(q: QueueDeclaration): Promise<void> {
    const { transport, log } = this.deps;
    while (!this.stopping) {
      const room = this.options.room(q.name);
      if (room <= 0) {
        await this.roomFreed.promise;
        continue;
      }
      let messages: Message[];
      try {
        // A paused queue is left alone: nothing received, so nothing re-sent or counted towards the DLQ.
        if ((await this.queueStates.get(q.name)).paused) {
          await this.idle(this.options.pausedRecheckMs ?? 5000);
          continue;
        }
        // Received hidden for one lease only, so a pool that dies at any point after the receive
        // gives them back within a lease, not after the queue's visibility timeout, at no extra cost.
        messages = await transport.receive(
          q.name,
          Math.min(10, room, q.batchSize),
          this.options.waitSeconds ?? 20,
          "main",
          holdSeconds(q.leaseSeconds * 1000),
        );
      } catch (err) {
        if (this.stopping) return;
        log.error("pool receive failed; backing off", { queue: q.name, ...errorFields(err) });
        await this.idle(1000);
        continue;
      }
      const received = messages.map((m) => ({
        messageId: m.MessageId ?? "",
        receiptHandle: m.ReceiptHandle ?? "",
      }));
      // The ones that wait for a child stay hidden while they wait.
      if (!this.stopping) await this.unstartedOf(q.name).hold(received, { receivedHidden: true });
      if (this.stopping) {
        await this.giveBackLate(q.name, received);
        return;
      }
      this.options.admit(messages.map((m) => this.waitingOf(q.name, m)));
    }
  }

  /** A received message as the pool holds it, its body parsed once. */
  private waitingOf(queue: string, m: Message): Waiting {
    const record = {
      messageId: m.MessageId ?? "",
      body: m.Body ?? "",
      receiptHandle: m.ReceiptHandle ?? "",
      receiveCount: Number(m.Attributes?.ApproximateReceiveCount ?? 1),
    };
    const msg = parseJobMessage(record.body);
    const now = this.deps.clock.now();
    return {
      record,
      ...(msg ? { message: msg } : {}),
      queue,
      kind: msg?.kind ?? "",
      critical: isCritical(msg?.priority),
      receivedAt: now,
      // Its place among the kind's non-critical messages: its enqueue aged by its priority.
      agedAt: msg ? agedArrival(msg.createdAt, msg.priority) : now,
    };
  }

  /** Waits `ms`, or less if the pool starts stopping. */
  private async idle(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([new Promise((r) => (timer = setTimeout(r, ms))), this.stopped.promise]);
    clearTimeout(timer);
  }

  /** Makes received, unclaimed messages visible again at once, ten per request; the number given back. */
  private async giveBack(queue: string, messages: readonly HeldMessage[]): Promise<number> {
    if (messages.length === 0) return 0;
    await setVisibility(
      this.deps,
      queue,
      messages,
      0,
      "could not return messages; they reappear within a lease",
    );
    return messages.length;
  }
}
