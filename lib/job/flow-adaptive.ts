import type { FlowRate } from "./flow.ts";

/**
 * A rate limit that adapts to its partner (docs/guide/flow-control.md, "Limits that adapt"): AIMD,
 * as TCP's congestion window. A throttle a handler names (a partner's 429 or 503) halves the key's
 * rate in force; each run of the key that ends done adds back a twentieth of the declared limit, so
 * a halved rate is whole again after ten good runs; the declared limit is the ceiling, and the rate
 * never drops under a sixty-fourth of it (at least one unit), so the key always moves. Pure: the
 * store keeps a key's rate in force beside its cool-down (lib/store/flow-cool-ops.ts).
 */

/** An adapted key's rate in force, as its state item keeps it. */
export interface AdaptedRate {
  /** Units per period in force, below the declared limit. */
  current: number;
  /** When it last changed. */
  since: number;
  /** Why it is below the limit: the last throttle's job and message. */
  reason: string;
}

/** The share of the declared limit one good run gives back. */
const CLIMB_SHARE = 1 / 20;
/** The floor, as a share of the declared limit. */
const FLOOR_SHARE = 1 / 64;

const floorOf = (rate: FlowRate<never>) => Math.max(1, Math.ceil(rate.limit * FLOOR_SHARE));

/** The rate after a throttle: half of `current` (the declared limit when not adapted), not under the floor. */
export const halvedRate = (rate: FlowRate<never>, current = rate.limit): number =>
  Math.max(floorOf(rate), Math.floor(current / 2));

/** The rate after a good run: `current` plus a twentieth of the limit; undefined once back at the limit. */
export function climbedRate(rate: FlowRate<never>, current: number): number | undefined {
  const next = current + Math.max(1, Math.ceil(rate.limit * CLIMB_SHARE));
  return next >= rate.limit ? undefined : next;
}

/**
 * The rate the GCRA applies to a key: the declared one, or the adapted one with its burst scaled
 * down alike (a burst of the whole limit would let a halved key start a full period's work at once).
 */
export function rateInForce<R extends FlowRate<never>>(rate: R, adapted: AdaptedRate | undefined): R {
  if (!rate.adaptive || adapted === undefined || adapted.current >= rate.limit) return rate;
  const burst = rate.burst ?? rate.limit;
  return {
    ...rate,
    limit: adapted.current,
    burst: Math.max(1, Math.floor((burst * adapted.current) / rate.limit)),
  };
}
