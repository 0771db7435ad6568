/**
 * Flow control per key (docs/guide/flow-control.md, docs/architecture.md §20): a kind's jobs carry a flow
 * key from their payload (a tenant's id), and each key gets its own share of the cluster: at most
 * `concurrency` runs at once (a function of the key gives weights), at most `rate.limit` starts per
 * `rate.periodSeconds`. Pure: the store and the runtime carry the rules out.
 */

export interface FlowRate {
  /** Starts per period for one key. */
  limit: number;
  periodSeconds: number;
  /** Starts one key may make at once after a quiet spell; `limit` when absent. */
  burst?: number;
}

export interface FlowSettings<P = unknown> {
  /** The job's flow key, from its payload: a non-empty string of at most 256 characters. */
  key(payload: P): string;
  /** Runs of one key at once, cluster-wide; a function of the key weighs keys (a premium tenant). */
  concurrency?: number | ((key: string) => number);
  /** Starts of one key per period, on the GCRA. */
  rate?: FlowRate;
}

/** A concurrency is a whole number of runs, at least one, and no key's may exceed this. */
export const MAX_KEY_CONCURRENCY = 1000;

/**
 * The runs one key may have at once, or why the kind's function gave no usable number (a problem of
 * the declaration, found at the key's first enqueue).
 */
export function concurrencyFor(settings: FlowSettings<never>, key: string): number | string | undefined {
  const { concurrency } = settings;
  if (concurrency === undefined) return undefined;
  let n: unknown;
  try {
    n = typeof concurrency === "function" ? concurrency(key) : concurrency;
  } catch (err) {
    return `its concurrency function threw: ${(err instanceof Error ? err.message : String(err)).slice(0, 200)}`;
  }
  if (typeof n !== "number" || !Number.isInteger(n) || n < 1 || n > MAX_KEY_CONCURRENCY)
    return `its concurrency must be a whole number from 1 to ${MAX_KEY_CONCURRENCY}, got ${String(n)}`;
  return n;
}

/** A key's rate as the GCRA reads it: one start every `intervalMs`, up to `burst` at once. */
export function rateCells(rate: FlowRate): { intervalMs: number; burst: number } {
  return { intervalMs: (rate.periodSeconds * 1000) / rate.limit, burst: rate.burst ?? rate.limit };
}

/**
 * A reservation on a key's rate (GCRA with reservations): the bucket's tat before this start, and
 * when this start may go (a start fits while tat stays within `burst` intervals of now).
 */
export function rateSlot(tatBefore: number | undefined, now: number, rate: FlowRate): number {
  const { intervalMs, burst } = rateCells(rate);
  const tat = Math.max(tatBefore ?? now, now);
  return Math.max(now, tat - (burst - 1) * intervalMs);
}
