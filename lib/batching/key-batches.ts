/**
 * Per-key accumulation for batch kinds (the batch-aint-one design; docs/architecture.md §18): items
 * wait in their key's queue, a batching policy decides when a key's next call starts, and limits
 * bound how many calls of one key run at once and how many items one call takes. Pure: the caller
 * gives the timers and the call to run, so the pool tier and the tests drive it the same way.
 */

import { InvariantError } from "../errors.ts";

export const batchPolicies = ["immediate", "size", "duration", "balanced"] as const;
export type BatchPolicy = (typeof batchPolicies)[number];

export interface KeyBatchLimits {
  /** Items one call takes at most. */
  maxSize: number;
  /** How long the first waiting item of a key may wait (size and duration policies). */
  maxWaitSeconds: number;
  /** Calls of one key that may run at once in this process (the cluster's guard is the caller's). */
  maxKeyConcurrency: number;
}

export interface Timers {
  /** Calls `fire` after `ms`; the result cancels it. */
  after(ms: number, fire: () => void): () => void;
}

export interface KeyBatchesOptions<T> {
  policy: BatchPolicy;
  limits: KeyBatchLimits;
  timers: Timers;
  /** Runs one call of `key` with its items; once it settles, the key may start another. */
  run(key: string, items: T[]): Promise<void>;
  /**
   * A call that rejected: `run` settles its own items, so a rejection is a bug in it, reported here
   * (the key goes on either way). Give it whenever `run` can reject at all.
   */
  failed?(key: string, err: unknown): void;
}

interface KeyQueue<T> {
  waiting: T[];
  inFlight: number;
  /** Cancels the wait timer of the current generation (the items waiting since the first one). */
  cancelTimer?: () => void;
  /** The wait of the first waiting item has passed: what waits is ready to go. */
  timedOut: boolean;
}

/**
 * Keys and their waiting items. Every event (an add, a timer, a call's end) asks the policy whether
 * the key's next call starts now, as the seed's worker does.
 * - immediate: a call starts whenever the key has capacity and items.
 * - size / duration: a call starts once maxSize items wait, or maxWaitSeconds after the first of
 *   them arrived; a call's end starts the next only if it is ready.
 * - balanced: a key with nothing in flight starts at once; otherwise items gather until a call
 *   ends (then all that waits, up to maxSize, goes) or maxSize wait.
 */
export class KeyBatches<T> {
  private readonly keys = new Map<string, KeyQueue<T>>();
  private readonly settled = new Set<Promise<void>>();
  private draining = false;

  private readonly options: KeyBatchesOptions<T>;

  constructor(options: KeyBatchesOptions<T>) {
    this.options = options;
  }

  add(key: string, item: T): void {
    if (this.draining) throw new InvariantError("key batches are draining; hand the item back instead");
    const q = this.queueOf(key);
    q.waiting.push(item);
    if (this.waits() && q.waiting.length === 1) this.startTimer(key, q);
    this.pump(key, q);
  }

  /** Items waiting for `key` (all keys when absent). */
  waitingCount(key?: string): number {
    if (key !== undefined) return this.keys.get(key)?.waiting.length ?? 0;
    let n = 0;
    for (const q of this.keys.values()) n += q.waiting.length;
    return n;
  }

  inFlight(key: string): number {
    return this.keys.get(key)?.inFlight ?? 0;
  }

  /**
   * Shutdown: no call starts from now on; every waiting item is returned (to be handed back), and
   * the promise resolves once the calls in flight have settled.
   */
  async drain(): Promise<T[]> {
    const left = this.takeWaiting();
    await Promise.allSettled([...this.settled]);
    return left;
  }

  /** As drain, at once: no call starts from now on, and every waiting item is returned. */
  takeWaiting(): T[] {
    this.draining = true;
    const left: T[] = [];
    for (const q of this.keys.values()) {
      q.cancelTimer?.();
      left.push(...q.waiting.splice(0));
    }
    return left;
  }

  /** The policies that keep a key's first item waiting up to maxWaitSeconds. */
  private waits(): boolean {
    return this.options.policy === "size" || this.options.policy === "duration";
  }

  private queueOf(key: string): KeyQueue<T> {
    let q = this.keys.get(key);
    if (!q) {
      q = { waiting: [], inFlight: 0, timedOut: false };
      this.keys.set(key, q);
    }
    return q;
  }

  private startTimer(key: string, q: KeyQueue<T>): void {
    q.timedOut = false;
    q.cancelTimer = this.options.timers.after(this.options.limits.maxWaitSeconds * 1000, () => {
      q.cancelTimer = undefined;
      q.timedOut = true;
      this.pump(key, q);
    });
  }

  /** Whether the key's waiting items go now, by the policy. */
  private ready(q: KeyQueue<T>): boolean {
    if (q.waiting.length === 0) return false;
    const full = q.waiting.length >= this.options.limits.maxSize;
    switch (this.options.policy) {
      case "immediate":
        return true;
      case "size":
      case "duration":
        return full || q.timedOut;
      case "balanced":
        return full || q.inFlight === 0;
    }
  }

  private pump(key: string, q: KeyQueue<T>): void {
    while (!this.draining && q.inFlight < this.options.limits.maxKeyConcurrency && this.ready(q)) {
      const items = q.waiting.splice(0, this.options.limits.maxSize);
      q.cancelTimer?.();
      q.cancelTimer = undefined;
      q.timedOut = false;
      // What is left is a new generation: its first item's wait starts now.
      if (q.waiting.length > 0 && this.waits()) this.startTimer(key, q);
      this.start(key, q, items);
    }
    if (q.waiting.length === 0 && q.inFlight === 0) this.keys.delete(key);
  }

  private start(key: string, q: KeyQueue<T>, items: T[]): void {
    q.inFlight += 1;
    const call = this.options
      .run(key, items)
      .catch((err: unknown) => this.options.failed?.(key, err))
      .finally(() => {
        this.settled.delete(call);
        q.inFlight -= 1;
        // A call's end makes room: balanced sends everything that gathered meanwhile, the others
        // what is ready.
        this.pump(key, q);
      });
    this.settled.add(call);
  }
}
