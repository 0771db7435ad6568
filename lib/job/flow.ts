import type { FlowRateView } from "./flow-views.ts";

/**
 * Flow control per key (docs/guide/flow-control.md, docs/architecture.md §20): a kind's jobs carry a
 * flow key from their payload (a tenant's id) for each of the kind's limits (one, or a list of up to
 * four), and each key gets its own share of the cluster: at most `concurrency` runs at once (a
 * function of the key gives weights), at most `rate.limit` units started per `rate.periodSeconds`
 * (a start costs `rate.cost(payload)` units, 1 when absent). Pure: the store and the runtime carry
 * the rules out.
 */

export interface FlowRate<P = unknown> {
  /** Units started per period for one key (a start costs one unit unless `cost` says more). */
  limit: number;
  periodSeconds: number;
  /** Units one key may start at once after a quiet spell; `limit` when absent. */
  burst?: number;
  /** The units one job takes from the rate (tokens, rows): a whole number from 1 to `limit`. */
  cost?: (payload: P) => number;
  /**
   * The rate follows the partner's back-pressure (lib/job/flow-adaptive.ts): a RetryAfterError or
   * ThrottledError naming this limit halves its key's rate, and each run of the key that ends done
   * gives back a twentieth of `limit`, never above `limit`.
   */
  adaptive?: boolean;
}

/** One limit of a kind's flow control: its key, and its concurrency, its rate or both. */
export interface FlowSettings<P = unknown> {
  /**
   * The limit's name within its kind (lowercase letters, digits and dashes, at most 32): what
   * GET /keys/{kind}/{key}?limit=… and a refusal call it. Absent: its position in the list, "1".."4".
   */
  name?: string;
  /** The job's flow key, from its payload: a non-empty string of at most 256 characters. */
  key(payload: P): string;
  /** Runs of one key at once, cluster-wide; a function of the key weighs keys (a premium tenant). */
  concurrency?: number | ((key: string) => number);
  /** Units started by one key per period, on the GCRA. */
  rate?: FlowRate<P>;
}

/** A kind's flow control: one limit, or a list of them that a job must all pass to start. */
export type FlowDeclaration<P = unknown> = FlowSettings<P> | readonly FlowSettings<P>[];

/** A kind declares at most this many limits. */
export const MAX_FLOW_LIMITS = 4;

/** A limit's name: lowercase letters, digits and dashes, at most 32 characters. */
export const FLOW_LIMIT_NAME = /^[a-z0-9][a-z0-9-]{0,31}$/;

/** One limit of a kind, with its name settled and its place in the kind's list. */
export interface FlowLimit {
  readonly name: string;
  /** Its position: the first limit (0) keeps a lone limit's stored layout (lib/job/flow-key.ts). */
  readonly index: number;
  readonly settings: FlowSettings<never>;
}

/** A kind's limits in declaration order, each named (its own name, else its position from "1"). */
export function flowLimitsOf(flow: FlowDeclaration<never> | undefined): FlowLimit[] {
  if (flow === undefined) return [];
  const list: readonly FlowSettings<never>[] = Array.isArray(flow) ? flow : [flow as FlowSettings<never>];
  return list.map((settings, index) => ({ name: settings.name ?? String(index + 1), index, settings }));
}

/** The limit of a kind named `name`; the first limit when `name` is absent. */
export function flowLimitNamed(
  flow: FlowDeclaration<never> | undefined,
  name: string | undefined,
): FlowLimit | undefined {
  const limits = flowLimitsOf(flow);
  return name === undefined ? limits[0] : limits.find((l) => l.name === name);
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

/**
 * The units a job takes from a rate (`rate.cost`, 1 when absent), or why its cost function gave no
 * usable number: a whole number from 1 to the rate's limit (a cost over the limit could never start).
 */
export function costFor(rate: FlowRate<never>, payload: unknown): number | string {
  if (rate.cost === undefined) return 1;
  let n: unknown;
  try {
    n = (rate.cost as (p: unknown) => unknown)(payload);
  } catch (err) {
    return `its cost function threw: ${(err instanceof Error ? err.message : String(err)).slice(0, 200)}`;
  }
  if (typeof n !== "number" || !Number.isInteger(n) || n < 1 || n > rate.limit)
    return `its cost must be a whole number from 1 to the rate's limit ${rate.limit}, got ${String(n)}`;
  return n;
}

/** A key's rate as the GCRA reads it: one unit every `intervalMs`, up to `burst` units at once. */
export function rateCells(rate: FlowRate<never>): { intervalMs: number; burst: number } {
  return { intervalMs: (rate.periodSeconds * 1000) / rate.limit, burst: rate.burst ?? rate.limit };
}

/**
 * A reservation of `cost` units on a key's rate (GCRA with reservations): the bucket's tat before
 * this start, and when this start may go. A start fits once the tat after it stays within `burst`
 * intervals of the start: t ≥ tat + (cost − burst) × interval.
 */
export function rateSlot(
  tatBefore: number | undefined,
  now: number,
  rate: FlowRate<never>,
  cost = 1,
): number {
  const { intervalMs, burst } = rateCells(rate);
  const tat = Math.max(tatBefore ?? now, now);
  return Math.max(now, tat + (cost - burst) * intervalMs);
}

/** The rate's settings as the API shows them (its cost function left out). */
export const rateView = ({ limit, periodSeconds, burst, adaptive }: FlowRate<never>): FlowRateView => ({
  limit,
  periodSeconds,
  ...(burst !== undefined ? { burst } : {}),
  ...(adaptive ? { adaptive: true as const } : {}),
});
