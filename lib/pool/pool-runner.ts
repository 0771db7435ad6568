import type { Message } from "@aws-sdk/client-sqs";
import { jobFields } from "../observability/log.ts";
import type { QueueDeclaration } from "../queues.ts";
import { RecordProcessor, type WorkerDeps } from "../runtime/process-record.ts";
import { parseJobMessage } from "../transport/job-message.ts";
import { ChildGroup } from "./child-group.ts";
import { type ChildEvent, type ChildSlot, slots } from "./child-slot.ts";
import type { PoolKindSpec } from "./pool-kinds.ts";
import { WarmChild } from "./warm-child.ts";

export interface PoolRunnerOptions {
  kinds: readonly PoolKindSpec[];
  /** The pool-tier queues this process long-polls. */
  queues: readonly QueueDeclaration[];
  /** The environment every child starts from (the kind's `env` is laid over it). */
  baseEnv: Readonly<Record<string, string | undefined>>;
  /** Where children run unless their kind names a `cwd`. */
  cwd: string;
  /** ReceiveMessage long-poll; 20 s on AWS. */
  waitSeconds?: number;
  /** How long a child gets to exit at EOF before it is killed, at shutdown or cull. */
  childGraceMs?: number;
}

/** A received message waiting for a child; it is not claimed yet. */
interface Waiting {
  record: { messageId: string; body: string; receiptHandle: string };
  queue: string;
  kind: string;
  critical: boolean;
  receivedAt: number;
}

interface Line {
  critical: Waiting[];
  normal: Waiting[];
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
 * The Fargate pool: long-polls the heavy queues, never holding more messages than its children can
 * take, lines them up per kind (critical first), reserves a warm child for each, then claims, runs,
 * heartbeats and finalizes through the same RecordProcessor as the Lambda worker.
 */
export class PoolRunner {
  private readonly processor: RecordProcessor;
  private readonly groups = new Map<string, ChildGroup>();
  private readonly lines = new Map<string, Line>();
  /** Messages held per queue: waiting in a line or running. */
  private readonly held = new Map<string, number>();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly loops: Promise<void>[] = [];
  private roomFreed = Promise.withResolvers<void>();
  private stopping = false;
  private reportedRespawns = new Map<string, number>();
  /** Messages a long poll brought in after the stop began, given straight back. */
  private returnedLate = 0;

  constructor(
    private readonly deps: WorkerDeps,
    private readonly options: PoolRunnerOptions,
  ) {
    this.processor = new RecordProcessor(deps);
    for (const spec of options.kinds) {
      const launch = {
        kind: spec.name,
        argv: spec.argv,
        env: { ...options.baseEnv, ...spec.env },
        cwd: spec.cwd ?? options.cwd,
      };
      this.groups.set(
        spec.name,
        new ChildGroup(spec.name, spec, (onExit) => new WarmChild(launch, deps.log, onExit)),
      );
      this.lines.set(spec.name, { critical: [], normal: [] });
    }
  }

  start(): void {
    for (const q of this.options.queues) this.loops.push(this.receiveLoop(q));
  }

  /** Children per kind, for tests and the local stack's status line. */
  children(kind: string): { busy: number; idle: number } {
    return this.groups.get(kind)?.stats() ?? { busy: 0, idle: 0 };
  }

  /** The room a queue has: every hard slot of its kinds, minus what it already holds. */
  private room(queue: string): number {
    let capacity = 0;
    for (const spec of this.options.kinds) if (spec.queue === queue) capacity += spec.hard;
    return Math.max(1, capacity) - (this.held.get(queue) ?? 0);
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
        messages = await transport.receive(
          q.name,
          Math.min(10, room, q.batchSize),
          this.options.waitSeconds ?? 20,
        );
      } catch (err) {
        if (this.stopping) return;
        log.error("pool receive failed; backing off", { queue: q.name, error: String(err) });
        await new Promise((r) => setTimeout(r, 1000));
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

  private admit(queue: string, m: Message): void {
    const record = { messageId: m.MessageId ?? "", body: m.Body ?? "", receiptHandle: m.ReceiptHandle ?? "" };
    const msg = parseJobMessage(record.body);
    this.held.set(queue, (this.held.get(queue) ?? 0) + 1);
    const line = msg ? this.lines.get(msg.kind) : undefined;
    if (!msg || !line) {
      // Not a pool kind here (or not a job): the processor ends it without a child.
      this.launch({
        record,
        queue,
        kind: msg?.kind ?? "",
        critical: false,
        receivedAt: this.deps.clock.now(),
      });
      return;
    }
    const waiting = {
      record,
      queue,
      kind: msg.kind,
      critical: msg.priority === "critical",
      receivedAt: this.deps.clock.now(),
    };
    (waiting.critical ? line.critical : line.normal).push(waiting);
  }

  private pumpAll(): void {
    for (const [kind, line] of this.lines) {
      const group = this.groups.get(kind) as ChildGroup;
      for (;;) {
        const head = line.critical[0] ?? line.normal[0];
        if (!head || this.stopping) break;
        const child = group.take(head.critical);
        if (!child) break;
        (head.critical ? line.critical : line.normal).shift();
        const slot: ChildSlot = {
          group,
          child,
          observe: (event, job, detail) => this.observe(event, job, head.receivedAt, detail),
        };
        this.launch(head, slot);
      }
      this.deps.metrics.gauge("childrenBusy", this.queueOf(kind), kind, group.stats().busy);
      this.deps.metrics.gauge("childrenIdle", this.queueOf(kind), kind, group.stats().idle);
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
        if (slot) {
          const line = this.lines.get(w.kind);
          slot.group.release(slot.child, (line?.critical.length ?? 0) > 0);
        }
        this.held.set(w.queue, (this.held.get(w.queue) ?? 1) - 1);
        this.roomFreed.resolve();
        this.roomFreed = Promise.withResolvers<void>();
        this.pumpAll();
      });
    this.inFlight.add(done);
  }

  private observe(
    event: ChildEvent,
    job: { id: string; kind: string; queue: string },
    receivedAt: number,
    detail?: string,
  ): void {
    const { metrics, log } = this.deps;
    switch (event) {
      case "dispatched":
        metrics.count("poolDispatched", job.queue, job.kind);
        metrics.time("dispatchLatency", job.queue, job.kind, this.deps.clock.now() - receivedAt);
        return;
      case "desync":
        metrics.count("childDesyncs", job.queue, job.kind);
        log.warn("child out of sync; killed it, the attempt fails", { ...jobFields(job), detail });
        return;
      case "timeout":
        metrics.count("childTimeouts", job.queue, job.kind);
        log.warn("child timed out; killed it", jobFields(job));
        return;
      case "rip":
        log.warn("child died mid-job; running the job again on a fresh child first", {
          ...jobFields(job),
          detail,
        });
        return;
    }
  }

  private queueOf(kind: string): string {
    return this.options.kinds.find((k) => k.name === kind)?.queue ?? "";
  }

  /** Counts respawns since the last report and flushes metrics (the pool calls this on a timer). */
  flushMetrics(): void {
    for (const [kind, group] of this.groups) {
      const delta = group.respawns - (this.reportedRespawns.get(kind) ?? 0);
      if (delta > 0) this.deps.metrics.count("childRespawns", this.queueOf(kind), kind, delta);
      this.reportedRespawns.set(kind, group.respawns);
      const { busy, idle } = group.stats();
      this.deps.metrics.gauge("childrenBusy", this.queueOf(kind), kind, busy);
      this.deps.metrics.gauge("childrenIdle", this.queueOf(kind), kind, idle);
    }
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
      handedBack = this.deps.running?.abortAll("shutdown") ?? 0;
      await Promise.allSettled([...this.inFlight]);
    }
    await Promise.all([...this.groups.values()].map((g) => g.stopAll(this.options.childGraceMs ?? 2000)));
    await polled;
    this.flushMetrics();
    return { finished: started - handedBack, handedBack, returned: returned + this.returnedLate };
  }

  private returnWaiting(): Promise<number> {
    const waiting = [...this.lines.values()].flatMap((l) => [...l.critical.splice(0), ...l.normal.splice(0)]);
    for (const w of waiting) this.held.set(w.queue, (this.held.get(w.queue) ?? 1) - 1);
    return this.giveBack(waiting.map((w) => ({ queue: w.queue, ...w.record })));
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
