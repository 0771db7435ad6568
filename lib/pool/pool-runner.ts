import type { Message } from "@aws-sdk/client-sqs";
import type { PoolKindSpec } from "../declarations/pool-kind.ts";
import type { QueueDeclaration } from "../declarations/queue-declaration.ts";
import type { BatchKindDefinition } from "../job/batch.ts";
import { jobFields } from "../observability/log.ts";
import { RecordProcessor } from "../runtime/process-record.ts";
import { QueueStateCache } from "../runtime/queue-state-cache.ts";
import type { WorkerDeps } from "../runtime/record-types.ts";
import {
  type HeldMessage,
  holdSeconds,
  setVisibility,
  UnstartedMessages,
} from "../runtime/unstarted-messages.ts";
import { getQueueState } from "../store/queue-state.ts";
import { type JobMessage, parseJobMessage } from "../transport/job-message.ts";
import { unlaunchableKinds } from "./child-program.ts";
import { type ChildSlot, slots } from "./child-slot.ts";
import { childUsersFor } from "./child-users.ts";
import { type InFlight, InFlightWork } from "./in-flight.ts";
import { Intake, type Waiting } from "./intake.ts";
import { runKeyCall } from "./key-call.ts";
import { type KeyedWaiting, PoolBatches, realTimers } from "./pool-batches.ts";
import { PoolChildren } from "./pool-children.ts";
import { PoolObserver } from "./pool-observer.ts";
import type { DrainReport, PoolRunnerOptions } from "./pool-options.ts";

/**
 * A job of a kind this pool refused (its program is missing) goes back to the queue, re-sent with
 * this delay, for a pool that can run it: no attempt is spent and, the message being fresh, no
 * receive count, so the job waits (queued) until the program is installed instead of dying.
 */
const REFUSED_KIND_RECHECK_SECONDS = 300;

/**
 * The Fargate pool: long-polls the heavy queues, taking only what its children can start (Intake),
 * lines messages up per kind (critical first), reserves a warm child for each, then claims, runs,
 * heartbeats and finalizes through the same RecordProcessor as the Lambda worker.
 */
export class PoolRunner {
  /** Kinds whose program can't be started, with the reason (naming kind and program). */
  readonly refused: ReadonlyMap<string, string>;
  private readonly processor: RecordProcessor;
  private readonly warm: PoolChildren;
  private readonly intake: Intake;
  private readonly observer: PoolObserver;
  private readonly queueStates: QueueStateCache;
  /** Per queue: received messages not running yet, kept hidden about one lease at a time. */
  private readonly unstarted = new Map<string, UnstartedMessages>();
  /** Work in flight (a delivery, or a batch call), with how many messages each carries. */
  private readonly inFlight = new InFlightWork();
  private readonly batches: PoolBatches;
  private readonly loops: Promise<void>[] = [];
  private roomFreed = Promise.withResolvers<void>();
  private readonly stopped = Promise.withResolvers<void>();
  private stopping = false;
  /** Messages a long poll brought in after the stop began, given straight back. */
  private returnedLate = 0;

  constructor(
    private readonly deps: WorkerDeps,
    private readonly options: PoolRunnerOptions,
  ) {
    this.processor = new RecordProcessor(deps);
    // Programs are looked up on the PATH the children get (as users of their own, a narrower one).
    const users = options.childUsers && childUsersFor(options.childUsers, options.baseEnv.PATH, deps.log);
    const childPath = users ? { ...options.baseEnv, PATH: users.path } : options.baseEnv;
    this.refused = unlaunchableKinds(options.kinds, childPath, options.cwd);
    for (const reason of this.refused.values()) {
      deps.log.error(`${reason}; the pool refuses the kind, and its jobs wait in the queue`, {});
    }
    const served = options.kinds.filter((k) => !this.refused.has(k.name));
    this.intake = new Intake(served);
    this.batches = new PoolBatches(served, options.timers ?? realTimers, (spec, key, items) =>
      this.runKeyCall(spec, key, items),
    );
    this.queueStates = new QueueStateCache(
      (q) => getQueueState(deps.store, q),
      deps.clock,
      options.queueStateTtlMs,
    );
    this.observer = new PoolObserver(deps, (kind) => options.kinds.find((k) => k.name === kind)?.queue ?? "");
    for (const q of options.queues) {
      this.unstarted.set(
        q.name,
        new UnstartedMessages({
          transport: deps.transport,
          queue: q.name,
          leaseMs: q.leaseSeconds * 1000,
          log: deps.log,
        }),
      );
    }
    this.warm = new PoolChildren({
      kinds: served,
      baseEnv: options.baseEnv,
      cwd: options.cwd,
      ...(options.childLauncher ? { childLauncher: options.childLauncher } : {}),
      ...(users ? { users } : {}),
      log: deps.log,
      observer: this.observer,
    });
  }

  start(): void {
    for (const q of this.options.queues) this.loops.push(this.receiveLoop(q));
  }

  /** Children per kind, for tests and the local stack's status line. */
  children(kind: string): { busy: number; idle: number } {
    return this.warm.stats(kind);
  }

  /** Batch kinds' items waiting in their keys' lines (received, not claimed). */
  batchItemsWaiting(): number {
    return this.batches.waiting();
  }

  private room(queue: string): number {
    return this.intake.room(queue, (kind) => this.warm.stats(kind).busy);
  }

  private async receiveLoop(q: QueueDeclaration): Promise<void> {
    const { transport, log } = this.deps;
    while (!this.stopping) {
      const room = this.room(q.name);
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
        log.error("pool receive failed; backing off", { queue: q.name, error: String(err) });
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
        this.returnedLate += await this.giveBack(q.name, received);
        return;
      }
      for (const m of messages) this.admit(q.name, m);
      this.pumpAll();
    }
  }

  /** Waits `ms`, or less if the pool starts stopping. */
  private async idle(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([new Promise((r) => (timer = setTimeout(r, ms))), this.stopped.promise]);
    clearTimeout(timer);
  }

  private admit(queue: string, m: Message): void {
    const record = {
      messageId: m.MessageId ?? "",
      body: m.Body ?? "",
      receiptHandle: m.ReceiptHandle ?? "",
      receiveCount: Number(m.Attributes?.ApproximateReceiveCount ?? 1),
    };
    const msg = parseJobMessage(record.body);
    const waiting: Waiting = {
      record,
      ...(msg ? { message: msg } : {}),
      queue,
      kind: msg?.kind ?? "",
      critical: msg?.priority === "critical",
      receivedAt: this.deps.clock.now(),
    };
    if (msg && this.refused.has(msg.kind)) {
      this.intake.hold(waiting);
      this.track(waiting, () => this.deferRefused(waiting, msg));
      return;
    }
    // A batch kind's item waits in its key's line; its call reserves a child when it starts.
    this.intake.count(queue);
    if (this.batches.add(waiting)) return;
    this.intake.release(queue);
    // Not a pool kind here (or not a job): the processor ends it without a child.
    if (!this.intake.hold(waiting)) this.launch(waiting);
  }

  private pumpAll(): void {
    for (const [kind, group] of this.warm.all()) {
      if (!this.stopping) this.warm.serveWaiters(kind);
      for (;;) {
        const head = this.intake.head(kind);
        if (!head || this.stopping) break;
        const child = group.take(head.critical);
        if (!child) break;
        this.intake.take(head);
        this.launch(head, this.warm.slotOf(group, child, head.receivedAt));
      }
      this.observer.children(group);
    }
  }

  /**
   * One batch call of a key: it waits for a child, then runs (key-call.ts). A pool that stops before
   * a child is free gives the items straight back.
   */
  private runKeyCall(spec: PoolKindSpec, key: string, items: KeyedWaiting[]): Promise<void> {
    const entry: InFlight = { messages: items.length };
    const work = async (): Promise<void> => {
      let slot: ChildSlot | undefined;
      if (!this.stopping) {
        const reserved = this.warm.reserve(spec.name, Math.min(...items.map((w) => w.receivedAt)));
        this.pumpAll();
        slot = await reserved;
      }
      if (!slot) {
        entry.messages = 0;
        this.returnedLate += await this.giveBack(
          spec.queue,
          items.map((w) => w.record),
        );
        return;
      }
      try {
        const kind = this.deps.registry.get(spec.name) as BatchKindDefinition;
        const call = { kind, queue: spec.queue, key, items };
        await runKeyCall(this.deps, this.processor, this.unstartedOf(spec.queue), slot, call);
      } finally {
        slot.group.release(slot.child, false);
      }
    };
    return this.trackWork(items, work, entry);
  }

  private unstartedOf(queue: string): UnstartedMessages {
    const unstarted = this.unstarted.get(queue);
    if (!unstarted) throw new Error(`the pool does not read queue ${queue}`);
    return unstarted;
  }

  private launch(w: Waiting, slot?: ChildSlot): void {
    this.track(
      w,
      async () => {
        // From here the run's heartbeat keeps the message hidden.
        await this.unstartedOf(w.queue).release(w.record.receiptHandle);
        const ack = slot
          ? await slots.run(slot, () => this.processor.process(w.record, w.message))
          : await this.processor.process(w.record, w.message);
        if (ack) await this.deps.transport.delete(w.queue, w.record.receiptHandle);
      },
      slot,
    );
  }

  /** A refused kind's job: a fresh message with a delay, the received one deleted; nothing claimed. */
  private async deferRefused(w: Waiting, msg: JobMessage): Promise<void> {
    await this.unstartedOf(w.queue).release(w.record.receiptHandle);
    await this.deps.transport.send({ message: msg, delaySeconds: REFUSED_KIND_RECHECK_SECONDS });
    await this.deps.transport.delete(w.queue, w.record.receiptHandle);
    this.deps.log.warn("deferred a job of a refused kind", {
      ...jobFields(msg),
      reason: this.refused.get(msg.kind),
      delaySeconds: REFUSED_KIND_RECHECK_SECONDS,
    });
  }

  /** Runs one delivery's work in flight: stop() waits for it, and its end frees room and the child. */
  private track(w: Waiting, work: () => Promise<void>, slot?: ChildSlot): void {
    void this.trackWork([w], async () => {
      try {
        await work();
      } finally {
        if (slot) slot.group.release(slot.child, this.intake.criticalWaiting(w.kind));
      }
    });
  }

  /** Work on received messages, in flight: stop() waits for it; its end frees their room. */
  private trackWork(
    messages: readonly Waiting[],
    work: () => Promise<void>,
    entry: InFlight = { messages: messages.length },
  ): Promise<void> {
    const done = work()
      .catch((err) =>
        this.deps.log.error("pool run failed unexpectedly; SQS will redeliver it", {
          messageIds: messages.map((w) => w.record.messageId),
          error: err instanceof Error ? err.message : String(err),
        }),
      )
      .finally(() => {
        this.inFlight.delete(done);
        for (const w of messages) this.intake.release(w.queue);
        this.roomFreed.resolve();
        this.roomFreed = Promise.withResolvers<void>();
        this.pumpAll();
      });
    this.inFlight.add(done, entry);
    return done;
  }

  /**
   * SIGKILLs every child at once, synchronously (for a process "exit" hook: the pool is going away
   * without a drain, and where setpriv is missing nothing else would stop a busy child).
   */
  killChildren(): void {
    this.warm.killAll();
  }

  /** Reports the children and flushes metrics (the pool calls this on a timer). */
  flushMetrics(): void {
    for (const [, group] of this.warm.all()) this.observer.children(group);
    this.deps.metrics.flush();
  }

  /**
   * SIGTERM: stop receiving; make every waiting message visible again; give running jobs until
   * `deadlineMs` to finish, then hand the rest back (attempt returned, visibility 0); stop the children.
   * A long poll in progress is not aborted: SQS would still hand its messages to the closed
   * connection, hiding them for a whole visibility timeout. It ends within `waitSeconds` and its
   * messages go straight back.
   */
  async stop(deadlineMs: number): Promise<DrainReport> {
    this.stopping = true;
    this.stopped.resolve();
    this.roomFreed.resolve();
    const polled = Promise.allSettled(this.loops);
    // Batch calls still waiting for a child give their items back (counted in returnedLate).
    this.warm.cancelWaiters();
    const returned = await this.returnWaiting();
    const started = this.inFlight.messages();
    let handedBack = 0;
    if (!(await this.inFlight.settledWithin(deadlineMs))) {
      // Closing also aborts a run that registers later (its claim was still in flight).
      handedBack = this.deps.running?.close("shutdown") ?? 0;
      await this.inFlight.settled();
    }
    await this.warm.stopAll(this.options.childGraceMs ?? 2000);
    await polled;
    this.flushMetrics();
    return { finished: started - handedBack, handedBack, returned: returned + this.returnedLate };
  }

  /** Stops hiding the waiting messages (a hold on its way lands first), then gives them back. */
  private async returnWaiting(): Promise<number> {
    await Promise.all([...this.unstarted.values()].map((u) => u.stop()));
    const byQueue = Map.groupBy([...this.intake.drain(), ...this.batches.drain()], (w) => w.queue);
    const counts = await Promise.all(
      [...byQueue].map(([queue, waiting]) =>
        this.giveBack(
          queue,
          waiting.map((w) => w.record),
        ),
      ),
    );
    return counts.reduce((a, b) => a + b, 0);
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
