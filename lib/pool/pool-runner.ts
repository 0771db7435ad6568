import type { PoolKindSpec } from "../declarations/pool-kind.ts";
import type { BatchKindDefinition } from "../job/batch.ts";
import { errorFields } from "../observability/log.ts";
import { RecordProcessor } from "../runtime/process-record.ts";
import type { WorkerDeps } from "../runtime/record-types.ts";
import { childUsersFor } from "./child-users.ts";
import { type InFlight, InFlightWork } from "./in-flight.ts";
import { Intake, type Waiting } from "./intake.ts";
import { runKeyCall } from "./key-call.ts";
import { type KeyedWaiting, PoolBatches, realTimers } from "./pool-batches.ts";
import { PoolChildren } from "./pool-children.ts";
import { PoolObserver } from "./pool-observer.ts";
import type { DrainReport, PoolRunnerOptions } from "./pool-options.ts";
import { PoolReceiver } from "./pool-receiver.ts";
import { deferRefused, refuseUnlaunchable } from "./refused-kinds.ts";
import { currentChild, type ReservedChild } from "./reserved-child.ts";

/**
 * The Fargate pool: long-polls the heavy queues, taking only what its children can start (the
 * receiver asks the Intake for room), lines messages up per kind (critical first), reserves a warm
 * child for each, then claims, runs, heartbeats and finalizes through the same RecordProcessor as
 * the Lambda worker. What is where:
 * - PoolReceiver: the receive loops, the pause check, the hold on unstarted messages, the hand-back;
 * - Intake: the room and the per-kind lines; PoolBatches: the batch kinds' per-key lines;
 * - PoolChildren: the warm children, per kind, and the batch calls waiting for one;
 * - InFlightWork: the work in flight, which the drain waits for;
 * - this class: admission (which line a message joins) and dispatch (a child for each head of line).
 */
export class PoolRunner {
  /** Kinds whose program can't be started, with the reason (naming kind and program). */
  readonly refused: ReadonlyMap<string, string>;
  private readonly processor: RecordProcessor;
  private readonly receiver: PoolReceiver;
  private readonly intake: Intake;
  private readonly batches: PoolBatches;
  private readonly warm: PoolChildren;
  private readonly inFlight: InFlightWork;

  private readonly deps: WorkerDeps;

  constructor(deps: WorkerDeps, options: PoolRunnerOptions) {
    this.deps = deps;
    this.processor = new RecordProcessor(deps);
    // Programs are looked up on the PATH the children get (as users of their own, a narrower one).
    const users = options.childUsers && childUsersFor(options.childUsers, options.baseEnv.PATH, deps.log);
    const childPath = users ? { ...options.baseEnv, PATH: users.path } : options.baseEnv;
    this.refused = refuseUnlaunchable(options.kinds, childPath, options.cwd, deps.log);
    const served = options.kinds.filter((k) => !this.refused.has(k.name));
    this.intake = new Intake(served);
    this.batches = new PoolBatches(
      served,
      options.timers ?? realTimers,
      (spec, key, items) => this.runKeyCall(spec, key, items),
      (spec, _key, err) => deps.log.error("a batch call failed", { kind: spec.name, ...errorFields(err) }),
    );
    // The receiver takes the queues and the receive settings of the options.
    this.receiver = new PoolReceiver(deps, {
      ...options,
      room: (queue) => this.intake.room(queue, (kind) => this.warm.stats(kind).busy),
      admit: (received) => {
        for (const w of received) this.admit(w);
        this.pumpAll();
      },
    });
    this.inFlight = new InFlightWork(deps.log, (messages) => {
      for (const w of messages) this.intake.release(w.queue);
      this.receiver.roomMayHaveFreed();
      this.pumpAll();
    });
    const observer = new PoolObserver(
      deps,
      (kind) => options.kinds.find((k) => k.name === kind)?.queue ?? "",
    );
    this.warm = new PoolChildren({
      kinds: served,
      baseEnv: options.baseEnv,
      cwd: options.cwd,
      ...(options.childLauncher ? { childLauncher: options.childLauncher } : {}),
      ...(users ? { users } : {}),
      log: deps.log,
      observer,
      graceMs: options.childGraceMs ?? 2000,
    });
  }

  start(): void {
    this.receiver.start();
  }

  /** Children per kind, for tests and the local stack's status line. */
  children(kind: string): { busy: number; idle: number } {
    return this.warm.stats(kind);
  }

  /** Batch kinds' items waiting in their keys' lines (received, not claimed). */
  batchItemsWaiting(): number {
    return this.batches.waiting();
  }

  /** Admission: which line a received message joins, or what runs it without a line. */
  private admit(w: Waiting): void {
    const msg = w.message;
    if (msg && this.refused.has(msg.kind)) {
      this.intake.hold(w);
      const reason = this.refused.get(msg.kind);
      this.track(w, () => deferRefused(this.deps, this.receiver.unstartedOf(w.queue), w, msg, reason));
      return;
    }
    // A batch kind's item waits in its key's line; its call reserves a child when it starts.
    this.intake.count(w.queue);
    if (this.batches.add(w)) return;
    this.intake.release(w.queue);
    // Not a pool kind here (or not a job): the processor ends it without a child.
    if (!this.intake.hold(w)) this.launch(w);
  }

  /** Dispatch: free children go to the batch calls waiting first, then to each kind's line. */
  private pumpAll(): void {
    const stopping = this.receiver.isStopping;
    for (const [kind, children] of this.warm.all()) {
      if (!stopping) this.warm.serveWaiters(kind);
      for (;;) {
        const head = this.intake.head(kind);
        if (!head || stopping) break;
        const child = children.take(head.critical);
        if (!child) break;
        this.intake.take(head);
        this.launch(head, this.warm.reservation(children, child, head.receivedAt));
      }
    }
    this.warm.report();
  }

  /**
   * One batch call of a key: it waits for a child, then runs (key-call.ts). A pool that stops before
   * a child is free gives the items straight back.
   */
  private runKeyCall(spec: PoolKindSpec, key: string, items: KeyedWaiting[]): Promise<void> {
    const entry: InFlight = { messages: items.length };
    const work = async (): Promise<void> => {
      let reserved: ReservedChild | undefined;
      if (!this.receiver.isStopping) {
        const reserving = this.warm.reserve(spec.name, Math.min(...items.map((w) => w.receivedAt)));
        this.pumpAll();
        reserved = await reserving;
      }
      if (!reserved) {
        entry.messages = 0;
        await this.receiver.giveBackLate(
          spec.queue,
          items.map((w) => w.record),
        );
        return;
      }
      try {
        const kind = this.deps.registry.get(spec.name) as BatchKindDefinition;
        const call = { kind, queue: spec.queue, key, items };
        const unstarted = this.receiver.unstartedOf(spec.queue);
        await runKeyCall(this.deps, this.processor, unstarted, reserved, call);
      } finally {
        reserved.children.release(reserved.child, false);
      }
    };
    return this.inFlight.track(items, work, entry);
  }

  private launch(w: Waiting, reserved?: ReservedChild): void {
    this.track(
      w,
      async () => {
        // From here the run's heartbeat keeps the message hidden.
        await this.receiver.unstartedOf(w.queue).release(w.record.receiptHandle);
        const ack = reserved
          ? await currentChild.run(reserved, () => this.processor.process(w.record, w.message))
          : await this.processor.process(w.record, w.message);
        if (ack) await this.deps.transport.delete(w.queue, w.record.receiptHandle);
      },
      reserved,
    );
  }

  /** Runs one delivery's work in flight; its end frees the child (kept above soft for critical work). */
  private track(w: Waiting, work: () => Promise<void>, reserved?: ReservedChild): void {
    void this.inFlight.track([w], async () => {
      try {
        await work();
      } finally {
        if (reserved) reserved.children.release(reserved.child, this.intake.criticalWaiting(w.kind));
      }
    });
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
    this.warm.report();
    this.deps.metrics.flush();
  }

  /**
   * SIGTERM: stop receiving (a long poll in progress ends on its own, its messages given back);
   * make every waiting message visible again; give running jobs until `deadlineMs` to finish, then
   * hand the rest back (attempt returned, visibility 0); stop the children.
   */
  async stop(deadlineMs: number): Promise<DrainReport> {
    const polled = this.receiver.stop();
    // Batch calls still waiting for a child give their items back (counted in returnedLate).
    this.warm.cancelWaiters();
    const returned = await this.receiver.returnWaiting(() => [
      ...this.intake.drain(),
      ...this.batches.drain(),
    ]);
    // Closing also aborts a run that registers later (its claim was still in flight).
    const ran = await this.inFlight.drain(deadlineMs, () => this.deps.running?.close("shutdown") ?? 0);
    await this.warm.stopAll();
    await polled;
    this.flushMetrics();
    return { ...ran, returned: returned + this.receiver.returnedLate };
  }
}
