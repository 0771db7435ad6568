import type { AbortCause } from "../job/kind.ts";
import type { Log } from "../observability/log.ts";
import type { StoreContext } from "../store/context.ts";
import { heartbeat } from "../store/lease-ops.ts";
import type { SqsTransport } from "../transport/sqs-transport.ts";

export interface HeartbeatTarget {
  id: string;
  queue: string;
  token: string;
  receiptHandle: string;
  leaseMs: number;
  /** When the claim's lease ends; each renewal moves it. */
  leaseUntil: number;
}

/**
 * Keeps one run's ownership alive: every third of the lease it renews the lease (which also reads
 * the cancel flag) and pushes the message's visibility out by one lease. A lost lease or a cancel
 * request aborts the run. So does a lease that ran out before it could be renewed (the process was
 * frozen, or the store unreachable): another worker may own the job by now, so the run stops at once
 * rather than at the renewal that would find out (docs/architecture.md §6).
 */
export class Heartbeat {
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;
  private leaseUntil: number;

  constructor(
    private readonly target: HeartbeatTarget,
    private readonly store: StoreContext,
    private readonly transport: SqsTransport,
    private readonly abort: (cause: AbortCause) => void,
    private readonly log: Log,
  ) {
    this.leaseUntil = target.leaseUntil;
  }

  start(): void {
    const every = Math.max(50, Math.floor(this.target.leaseMs / 3));
    this.timer = setInterval(() => void this.beat(), every);
    this.timer.unref();
  }

  /** Stops the timer; resolves once a renewal already on its way has landed, so none lands after the settle. */
  stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    return this.inFlight ?? Promise.resolve();
  }

  /** One renewal; concurrent calls share it. Errors are logged, not thrown: the next tick retries. */
  beat(): Promise<void> {
    this.inFlight ??= this.renew().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  private async renew(): Promise<void> {
    const { id, queue, token, receiptHandle, leaseMs } = this.target;
    if (this.store.clock.now() >= this.leaseUntil) {
      void this.stop();
      this.abort("lease_lost");
      return;
    }
    try {
      const r = await heartbeat(this.store, id, token, leaseMs);
      if (!r.held) {
        void this.stop();
        this.abort("lease_lost");
        return;
      }
      this.leaseUntil = r.leaseUntil;
      if (r.cancelRequested) {
        void this.stop();
        this.abort("cancelled");
        return;
      }
      await this.transport.changeVisibility(queue, receiptHandle, leaseMs / 1000);
    } catch (err) {
      this.log.warn("heartbeat failed; will retry on the next tick", { jobId: id, error: String(err) });
    }
  }
}
