import type { MisfirePolicy } from "../store/schedule-item.ts";

/** A schedule's fire instants (epoch ms); croner supplies them, tests may supply a fake. */
export interface FireTimes {
  /** The first fire strictly after `ms`. */
  after(ms: number): number | undefined;
  /** The latest fire strictly before `ms`. */
  before(ms: number): number | undefined;
}

export interface FirePlanInput {
  /** The schedule's first fire not yet enqueued. */
  nextRunAt: number;
  now: number;
  /**
   * Fires before now + lookahead are enqueued this tick with runAt = their time (SQS delays them),
   * so a schedule finer than the tick still fires on time. The tick interval is the natural value.
   */
  lookaheadMs: number;
  /** A fire at or after now - grace is on time (a late tick); anything older is a misfire. */
  graceMs: number;
  misfire: MisfirePolicy;
  /** Bounds one tick's work; the rest is left for the next tick through nextRunAt. */
  maxFiresPerTick: number;
  times: FireTimes;
}

export interface FirePlan {
  /** Fire instants to enqueue, ascending. */
  fires: number[];
  /** Misfired instants that are not fired (all of them for skip, all but the latest for once). */
  missed: number;
  /** The first fire not planned; undefined when the expression has no further fire. */
  nextRunAt: number | undefined;
}

/**
 * Beyond this many misfires the walk jumps straight to the present, so an every-second schedule that
 * was down for a day costs a bounded amount of CPU; `missed` is then a floor.
 */
export const MISSED_COUNT_LIMIT = 1_000;

/**
 * Plans one tick for one schedule. Pure: the same input always gives the same plan, so a retried or
 * concurrent tick plans the same fire instants, which the enqueue's unique keys then dedupe.
 */
export function planFires(input: FirePlanInput): FirePlan {
  const { now, times, misfire } = input;
  const horizon = now + Math.max(0, input.lookaheadMs);
  const late = now - Math.max(0, input.graceMs);
  const cap = Math.max(1, input.maxFiresPerTick);
  const fires: number[] = [];
  let missed = 0;
  let latestMissed: number | undefined;
  let t: number | undefined = input.nextRunAt;

  while (t !== undefined && t < late) {
    if (missed >= MISSED_COUNT_LIMIT) {
      latestMissed = times.before(late) ?? latestMissed;
      t = times.after(late - 1);
      break;
    }
    missed += 1;
    latestMissed = t;
    t = times.after(t);
  }
  if (misfire === "once" && latestMissed !== undefined) {
    fires.push(latestMissed);
    missed -= 1;
  }
  while (t !== undefined && t < horizon && fires.length < cap) {
    fires.push(t);
    t = times.after(t);
  }
  return { fires, missed, nextRunAt: t };
}
