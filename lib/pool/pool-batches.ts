import { KeyBatches, type Timers } from "../batching/key-batches.ts";
import type { PoolKindSpec } from "../declarations/pool-kind.ts";
import type { Waiting } from "./intake.ts";

/** A received item of a batch kind, with its key: it waits in its key's line, unclaimed. */
export type KeyedWaiting = Waiting & { key: string };

/** Real timers, for a pool that runs as a service. */
export const realTimers: Timers = {
  after(ms, fire) {
    const t = setTimeout(fire, ms);
    t.unref();
    return () => clearTimeout(t);
  },
};

/**
 * The pool's batch kinds (docs/architecture.md §18): one KeyBatches per kind, gathering received items
 * per key across receives, each kind's policy deciding when a key's call starts. A call is `run`
 * with its items; the key's next call waits for it by the per-process maxKeyConcurrency (the
 * cluster-wide bound is checked inside the call).
 */
export class PoolBatches {
  private readonly byKind = new Map<string, KeyBatches<KeyedWaiting>>();

  constructor(
    kinds: readonly PoolKindSpec[],
    timers: Timers,
    run: (kind: PoolKindSpec, key: string, items: KeyedWaiting[]) => Promise<void>,
    /** A call that rejected anyway (its own failures are settled inside it): logged, never dropped. */
    failed: (kind: PoolKindSpec, key: string, err: unknown) => void,
  ) {
    for (const spec of kinds) {
      const batch = spec.batch;
      if (!batch) continue;
      this.byKind.set(
        spec.name,
        new KeyBatches<KeyedWaiting>({
          policy: batch.policy,
          limits: {
            maxSize: batch.maxSize,
            maxWaitSeconds: batch.maxWaitSeconds,
            maxKeyConcurrency: batch.maxKeyConcurrency ?? 1,
          },
          timers,
          run: (key, items) => run(spec, key, items),
          failed: (key, err) => failed(spec, key, err),
        }),
      );
    }
  }

  /**
   * Lines the item up in its key's batch if its kind is a batch kind here and it carries a key (one
   * enqueued before its kind became a batch kind has none, and runs alone); false otherwise.
   */
  add(w: Waiting): boolean {
    const key = w.message?.batchKey;
    const batches = this.byKind.get(w.kind);
    if (!batches || key === undefined) return false;
    batches.add(key, { ...w, key });
    return true;
  }

  /** Items waiting in every key's line. */
  waiting(): number {
    let n = 0;
    for (const b of this.byKind.values()) n += b.waitingCount();
    return n;
  }

  /**
   * Shutdown: no call starts from now on. result: every item still waiting, to give back; the calls
   * already started are the pool's to finish or hand back.
   */
  drain(): KeyedWaiting[] {
    return [...this.byKind.values()].flatMap((b) => b.takeWaiting());
  }
}
