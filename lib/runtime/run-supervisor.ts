import type { AbortCause, AnyKind, BackoffPolicy } from "../job/kind.ts";
import { errorFields } from "../observability/log.ts";
import type { Claimed } from "./delivery.ts";
import { Heartbeat, type HeartbeatTarget } from "./heartbeat.ts";
import { type Decision, decideOutcome, type RunEnd } from "./outcome.ts";
import type { WorkerDeps } from "./record-types.ts";

/**
 * How a run keeps its job while it runs (docs/architecture.md §6, §16):
 * - lease: a claimed job's lease under its fence, renewed with the message's visibility (Heartbeat);
 *   a lost lease or a cancel request it reads aborts the run;
 * - visibility: a lane without a claim has only its message's visibility to keep, pushed out by one
 *   lease every third of one (the pool receives with a lease-long visibility).
 */
export type Hold =
  | { lease: HeartbeatTarget }
  | { visibility: { queue: string; receiptHandle: string; leaseSeconds: number } };

/** A claimed job's hold: its lease under its fence, ending when the claim said (or a lease from `now`). */
export function leaseOf({ item, delivery }: Claimed, now: number): Hold {
  const { fence, leaseMs, record } = delivery;
  const leaseUntil = item.leaseUntil ?? now + leaseMs;
  return {
    lease: {
      id: item.id,
      queue: item.queue,
      fence,
      receiptHandle: record.receiptHandle,
      leaseMs,
      leaseUntil,
    },
  };
}

/**
 * One job's watch for the length of a run: its hold kept and its id registered for cancel, either
 * of which aborts `signal` with its cause. Every path that runs a handler (a single record, a lane
 * without a claim, each item of a batch call) watches its jobs with this and nothing else.
 */
export class JobWatch {
  private readonly controller = new AbortController();
  private readonly unregister: (() => void) | undefined;
  private readonly heartbeat: Heartbeat | undefined;
  private readonly timer: NodeJS.Timeout | undefined;
  /** The handler's `heartbeat()`: one renewal of the hold now. */
  readonly keepAlive: () => Promise<void>;

  constructor(deps: WorkerDeps, jobId: string, hold: Hold) {
    const abort = (cause: AbortCause) => this.controller.abort(cause);
    if ("lease" in hold) {
      const heartbeat = new Heartbeat(hold.lease, deps.store, deps.transport, abort, deps.log);
      this.heartbeat = heartbeat;
      this.keepAlive = () => heartbeat.beat();
      heartbeat.start();
    } else {
      const { queue, receiptHandle, leaseSeconds } = hold.visibility;
      this.keepAlive = () => deps.transport.changeVisibility(queue, receiptHandle, leaseSeconds);
      // A failed extension is retried at the next tick; the message may come back early meanwhile.
      const extend = () =>
        void this.keepAlive().catch((error: unknown) =>
          deps.log.warn("could not extend a running job's message visibility; will retry", {
            jobId,
            queue,
            ...errorFields(error),
          }),
        );
      this.timer = setInterval(extend, (leaseSeconds * 1000) / 3);
      this.timer.unref();
    }
    this.unregister = deps.running?.register(jobId, abort);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Whether the run still surely holds its job: not aborted, and its lease (if any) not running out. */
  live(): boolean {
    return !this.controller.signal.aborted && (this.heartbeat?.live() ?? true);
  }

  /** Why the job was aborted on its own (cancel, lost lease, shutdown), if it was. */
  get cause(): AbortCause | undefined {
    return this.controller.signal.aborted ? (this.controller.signal.reason as AbortCause) : undefined;
  }

  /** Ends the hold and the registration; resolves once a renewal in flight has landed. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.unregister?.();
    await this.heartbeat?.stop();
  }
}

/**
 * Runs `work` until it settles, `controller` aborts (the run's watch, a cancel, a shutdown) or the
 * timeout aborts it, whichever is first. Work that ignores its signal is left behind: the end is
 * decided without it.
 */
export async function superviseRun(
  work: () => Promise<unknown>,
  controller: AbortController,
  timeoutMs: number,
): Promise<RunEnd> {
  const timer = setTimeout(() => controller.abort("timeout" satisfies AbortCause), timeoutMs);
  timer.unref();
  const aborted = new Promise<RunEnd>((resolve) => {
    const onAbort = () => resolve({ ok: false, abort: controller.signal.reason as AbortCause });
    if (controller.signal.aborted) onAbort();
    else controller.signal.addEventListener("abort", onAbort, { once: true });
  });
  const ran = (async (): Promise<RunEnd> => {
    try {
      return { ok: true, value: await work() };
    } catch (error) {
      return { ok: false, error };
    }
  })();
  try {
    return await Promise.race([ran, aborted]);
  } finally {
    clearTimeout(timer);
  }
}

/** A watched run of one job's handler: its watch's abort ends the run, with the timeout. */
export async function superviseJob(
  watch: JobWatch,
  work: (signal: AbortSignal) => Promise<unknown>,
  timeoutMs: number,
): Promise<RunEnd> {
  const controller = new AbortController();
  const follow = () => controller.abort(watch.signal.reason);
  if (watch.signal.aborted) follow();
  else watch.signal.addEventListener("abort", follow, { once: true });
  try {
    return await superviseRun(() => work(controller.signal), controller, timeoutMs);
  } finally {
    watch.signal.removeEventListener("abort", follow);
    await watch.stop();
  }
}

/**
 * How a run of one attempt ended, as the outcome to settle: the kind's backoff (else its queue's)
 * between retries, the engine's random for their jitter.
 */
export function decideRun(
  deps: Pick<WorkerDeps, "random">,
  end: RunEnd,
  run: { attempt: number; maxAttempts: number; timeoutSeconds: number },
  backoff: { kind?: BackoffPolicy | undefined; queue: BackoffPolicy },
): Decision {
  return decideOutcome(end, {
    ...run,
    backoff: backoff.kind ?? backoff.queue,
    ...(deps.random ? { random: deps.random } : {}),
  });
}

/**
 * A kind whose module failed to load (lib/job/kind-loading.ts): the attempt fails as a handler's
 * error fails it, retried with the kind's (or queue's) backoff while attempts are left.
 */
export function loadFailure(
  deps: Pick<WorkerDeps, "random">,
  item: { attempts: number; maxAttempts: number; timeoutSeconds?: number | undefined },
  kind: AnyKind,
  error: unknown,
  queueBackoff: BackoffPolicy,
): Decision {
  const run = {
    attempt: item.attempts,
    maxAttempts: item.maxAttempts,
    timeoutSeconds: item.timeoutSeconds ?? kind.timeoutSeconds,
  };
  return decideRun(deps, { ok: false, error }, run, { kind: kind.backoff, queue: queueBackoff });
}
