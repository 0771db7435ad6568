import type { AbortCause } from "../job/kind.ts";
import { errorFields, type Log } from "../observability/log.ts";
import type { StoreContext } from "../store/context.ts";
import { heartbeat } from "../store/lease-ops.ts";
import type { SqsTransport } from "../transport/sqs-transport.ts";

export interface HeartbeatTarget {
  id: string;
  queue: string;
  /** The claim's lease token: a renewal under another one finds the lease lost. */
  fence: string;
  receiptHandle: string;
  leaseMs: number;
  /** When the claim's lease ends; each renewal moves it. */
  leaseUntil: number;
}

/** How often a lease (and what it keeps hidden) is renewed: every third of it, so two renewals can fail before it ends. */
export function renewalIntervalMs(leaseMs: number): number {
  return Math.max(50, Math.floor(leaseMs / 3));
}

/**
 * Keeps one run's ownership alive: every third of the lease it renews the lease (which also reads
 * the cancel flag) and pushes the message's visibility out by one lease. A lost lease or a cancel
 * request aborts the run. So does a lease about to run out unrenewed (a renewal that hangs, a store
 * that is unreachable, a process that was frozen): another worker may own the job by then, so the
 * run stops a margin before the lease ends, whatever renewal is still in flight, rather than at the
 * renewal that would find out (docs/architecture.md §6).
 */
export class Heartbeat {
  private timer: NodeJS.Timeout | undefined;
  private deadline: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;
  private leaseUntil: number;
  private stopped = false;

  private readonly target: HeartbeatTarget;
  private readonly store: StoreContext;
  private readonly transport: SqsTransport;
  private readonly abort: (cause: AbortCause) => void;
  private readonly log: Log;

  constructor(
    target: HeartbeatTarget,
    store: StoreContext,
    transport: SqsTransport,
    abort: (cause: AbortCause) => void,
    log: Log,
  ) {
    this.target = target;
    this.store = store;
    this.transport = transport;
    this.abort = abort;
    this.log = log;
    this.leaseUntil = target.leaseUntil;
  }

  start(): void {
    this.timer = setInterval(() => void this.beat(), renewalIntervalMs(this.target.leaseMs));
    this.timer.unref();
    this.armDeadline();
  }

  /**
   * Stops the timers; a beat asked for later (a handler left running after its run was decided)
   * does nothing. Resolves once a renewal already on its way has landed, so none lands after the settle.
   */
  stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    if (this.deadline) clearTimeout(this.deadline);
    this.timer = undefined;
    this.deadline = undefined;
    return this.inFlight ?? Promise.resolve();
  }

  /**
   * Whether the lease is still surely ours: not stopped and not within its margin of the end. A run
   * checks it before work that must not overlap a new owner's (a durable step), since a process
   * thawed from a freeze may run the handler before this heartbeat's timers fire.
   */
  live(): boolean {
    return !this.stopped && this.store.clock.now() < this.leaseUntil - this.margin();
  }

  /** One renewal; concurrent calls share it. Errors are logged, not thrown: the next tick retries. */
  beat(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    this.inFlight ??= this.renew().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  /**
   * The lease ends at leaseUntil; the run stops a margin before, so a clock a little ahead elsewhere
   * can't overlap it. A second (a tenth of a long lease), but never more than a quarter of the lease,
   * so two renewals (every third of it) still come before the deadline.
   */
  private margin(): number {
    const { leaseMs } = this.target;
    return Math.min(Math.max(1000, leaseMs / 10), leaseMs / 4);
  }

  private leaseRunningOut(): void {
    void this.stop();
    this.abort("lease_lost");
  }

  private armDeadline(): void {
    if (this.stopped) return;
    if (this.deadline) clearTimeout(this.deadline);
    const wait = this.leaseUntil - this.margin() - this.store.clock.now();
    this.deadline = setTimeout(() => this.leaseRunningOut(), Math.max(0, wait));
    this.deadline.unref();
  }

  private async renew(): Promise<void> {
    const { id, queue, fence, receiptHandle, leaseMs } = this.target;
    // A process that was frozen: its timers fire late, this check first.
    if (this.store.clock.now() >= this.leaseUntil - this.margin()) {
      this.leaseRunningOut();
      return;
    }
    try {
      const r = await heartbeat(this.store, id, fence, leaseMs);
      if (!r.held) {
        void this.stop();
        this.abort("lease_lost");
        return;
      }
      this.leaseUntil = r.leaseUntil;
      this.armDeadline();
      if (r.cancelRequested) {
        void this.stop();
        this.abort("cancelled");
        return;
      }
      await this.transport.changeVisibility(queue, receiptHandle, leaseMs / 1000);
    } catch (error) {
      this.log.warn("heartbeat failed; will retry on the next tick", { jobId: id, ...errorFields(error) });
    }
  }
}
