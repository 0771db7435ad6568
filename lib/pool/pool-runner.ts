import type { Message } from "@aws-sdk/client-sqs";
import type { PoolKindSpec } from "../app/pool-kind.ts";
import type { QueueDeclaration } from "../app/queue-declaration.ts";
import { RecordProcessor, type WorkerDeps } from "../runtime/process-record.ts";
import { QueueStateCache } from "../runtime/queue-state-cache.ts";
import { getQueueState } from "../store/queue-state.ts";
import { parseJobMessage } from "../transport/job-message.ts";
import { childEnvironment } from "./child-environment.ts";
import { ChildGroup } from "./child-group.ts";
import { type ChildSlot, slots } from "./child-slot.ts";
import { Intake, type Waiting } from "./intake.ts";
import { PoolObserver } from "./pool-observer.ts";
import { WarmChild } from "./warm-child.ts";

export interface PoolRunnerOptions {
  kinds: readonly PoolKindSpec[];
  /** The pool-tier queues this process long-polls. */
  queues: readonly QueueDeclaration[];
  /** The pool's own environment; children get it without credentials or skyforge settings. */
  baseEnv: Readonly<Record<string, string | undefined>>;
  /** Where children run unless their kind names a `cwd`. */
  cwd: string;
  /** ReceiveMessage long-poll; 20 s on AWS. */
  waitSeconds?: number;
  /** How long a child gets to exit at EOF before it is killed, at shutdown or cull. */
  childGraceMs?: number;
  /** How often a paused queue is checked again; the pool doesn't receive from it meanwhile. */
  pausedRecheckMs?: number;
  /** How long a read of a queue's pause state is trusted (5 s, like the worker's). */
  queueStateTtlMs?: number;
}

export interface DrainReport {
  /** Runs that finished inside the deadline. */
  finished: number;
  /** Runs stopped at the deadline and handed back (lease released, visibility 0). */
  handedBack: number;
  /** Received but not yet started: made visible again at once. */
  returned: number;
}

/**
 * The Fargate pool: long-polls the heavy queues, taking only what its children can start (Intake),
 * lines messages up per kind (critical first), reserves a warm child for each, then claims, runs,
 * heartbeats and finalizes through the same RecordProcessor as the Lambda worker.
 */
export class PoolRunner {
  private readonly processor: RecordProcessor;
  private readonly groups = new Map<string, ChildGroup>();
  private readonly intake: Intake;
  private readonly observer: PoolObserver;
  private readonly queueStates: QueueStateCache;
  private readonly inFlight = new Set<Promise<void>>();
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
    this.intake = new Intake(options.kinds);
    this.queueStates = new QueueStateCache(
      (q) => getQueueState(deps.store, q),
      deps.clock,
      options.queueStateTtlMs,
    );
    this.observer = new PoolObserver(deps, (kind) => options.kinds.find((k) => k.name === kind)?.queue ?? "");
    const inherited = childEnvironment(options.baseEnv);
    for (const spec of options.kinds) {
      const launch = {
        kind: spec.name,
        argv: spec.argv,
        env: { ...inherited, ...spec.env },
        cwd: spec.cwd ?? options.cwd,
      };
      this.groups.set(
        spec.name,
        new ChildGroup(spec.name, spec, (onExit) => new WarmChild(launch, deps.log, onExit)),
      );
    }
  }

  start(): void {
    for (const q of this.options.queues) this.loops.push(this.receiveLoop(q));
  }

  /** Children per kind, for tests and the local stack's status line. */
  children(kind: string): { busy: number; idle: number } {
    return this.groups.get(kind)?.stats() ?? { busy: 0, idle: 0 };
  }

  private room(queue: string): number {
    return this.intake.room(queue, (kind) => this.children(kind).busy);
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
        messages = await transport.receive(
          q.name,
          Math.min(10, room, q.batchSize),
          this.options.waitSeconds ?? 20,
        );
      } catch (err) {
        if (this.stopping) return;
        log.error("pool receive failed; backing off", { queue: q.name, error: String(err) });
        await this.idle(1000);
        continue;
      }
      if (this.stopping) {
        this.returnedLate += await this.giveBack(
          messages.map((m) => ({
            queue: q.name,
            messageId: m.MessageId ?? "",
            receiptHandle: m.ReceiptHandle ?? "",
          })),
        );
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
    const record = { messageId: m.MessageId ?? "", body: m.Body ?? "", receiptHandle: m.ReceiptHandle ?? "" };
    const msg = parseJobMessage(record.body);
    const waiting: Waiting = {
      record,
      queue,
      kind: msg?.kind ?? "",
      critical: msg?.priority === "critical",
      receivedAt: this.deps.clock.now(),
    };
    // Not a pool kind here (or not a job): the processor ends it without a child.
    if (!this.intake.hold(waiting)) this.launch(waiting);
  }

  private pumpAll(): void {
    for (const [kind, group] of this.groups) {
      for (;;) {
        const head = this.intake.head(kind);
        if (!head || this.stopping) break;
        const child = group.take(head.critical);
        if (!child) break;
        this.intake.take(head);
        const slot: ChildSlot = {
          group,
          child,
          observe: (event, job, detail) => this.observer.event(event, job, head.receivedAt, detail),
        };
        this.launch(head, slot);
      }
      this.observer.children(group);
    }
  }

  private launch(w: Waiting, slot?: ChildSlot): void {
    const run = async () => {
      const ack = slot
        ? await slots.run(slot, () => this.processor.process(w.record))
        : await this.processor.process(w.record);
      if (ack) await this.deps.transport.delete(w.queue, w.record.receiptHandle);
    };
    const done = run()
      .catch((err) =>
        this.deps.log.error("pool run failed unexpectedly; SQS will redeliver it", {
          messageId: w.record.messageId,
          error: err instanceof Error ? err.message : String(err),
        }),
      )
      .finally(() => {
        this.inFlight.delete(done);
        if (slot) slot.group.release(slot.child, this.intake.criticalWaiting(w.kind));
        this.intake.release(w.queue);
        this.roomFreed.resolve();
        this.roomFreed = Promise.withResolvers<void>();
        this.pumpAll();
      });
    this.inFlight.add(done);
  }

  /** Reports the children and flushes metrics (the pool calls this on a timer). */
  flushMetrics(): void {
    for (const group of this.groups.values()) this.observer.children(group);
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
    const returned = await this.returnWaiting();
    const started = this.inFlight.size;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<"deadline">((r) => {
      timer = setTimeout(() => r("deadline"), deadlineMs);
    });
    const drained = Promise.allSettled([...this.inFlight]).then(() => "drained" as const);
    const first = await Promise.race([drained, deadline]);
    clearTimeout(timer);
    let handedBack = 0;
    if (first === "deadline") {
      // Closing also aborts a run that registers later (its claim was still in flight).
      handedBack = this.deps.running?.close("shutdown") ?? 0;
      await Promise.allSettled([...this.inFlight]);
    }
    await Promise.all([...this.groups.values()].map((g) => g.stopAll(this.options.childGraceMs ?? 2000)));
    await polled;
    this.flushMetrics();
    return { finished: started - handedBack, handedBack, returned: returned + this.returnedLate };
  }

  private returnWaiting(): Promise<number> {
    return this.giveBack(this.intake.drain().map((w) => ({ queue: w.queue, ...w.record })));
  }

  /** Makes received, unclaimed messages visible again at once; the number given back. */
  private async giveBack(
    messages: { queue: string; messageId: string; receiptHandle: string }[],
  ): Promise<number> {
    await Promise.all(
      messages.map((m) =>
        this.deps.transport.changeVisibility(m.queue, m.receiptHandle, 0).catch((err) =>
          this.deps.log.warn("could not return a message; it reappears after its visibility timeout", {
            messageId: m.messageId,
            error: String(err),
          }),
        ),
      ),
    );
    return messages.length;
  }
}
