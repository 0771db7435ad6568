/**
 * How the pool service follows its backlog, as data (infra/pool.ts turns it into Application Auto
 * Scaling step policies and CloudWatch alarms). Scale-out steps are offsets above the alarm
 * threshold of "any message visible"; scale-in waits until nothing is visible or in flight.
 */
export interface PoolScaling {
  min: number;
  max: number;
  /** [lower bound of visible messages above 0, tasks to add] */
  scaleOutSteps: readonly (readonly [number, number])[];
  scaleOutCooldownSeconds: number;
  /** Minutes with no message visible or in flight before the service goes back to `min`. */
  idleMinutesBeforeScaleIn: number;
}

export const poolScaling: PoolScaling = {
  // 0: an idle pool costs nothing; the first message starts a task within about two minutes.
  min: 0,
  max: 10,
  scaleOutSteps: [
    [0, 1],
    [20, 2],
    [100, 4],
  ],
  scaleOutCooldownSeconds: 120,
  // In-flight messages count as busy: a task is never stopped under running jobs by the scaler.
  idleMinutesBeforeScaleIn: 15,
};

/** Step adjustments in Application Auto Scaling's shape: each step's upper bound is the next's lower. */
export function stepAdjustments(steps: PoolScaling["scaleOutSteps"]) {
  return steps.map(([lower, add], i) => {
    const next = steps[i + 1];
    return {
      metricIntervalLowerBound: String(lower),
      ...(next ? { metricIntervalUpperBound: String(next[0]) } : {}),
      scalingAdjustment: add,
    };
  });
}
