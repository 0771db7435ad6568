import type { KeyHeat } from "./heat-meter.ts";

/**
 * What one DynamoDB partition takes a second (AWS's documented per-partition maximum, on-demand or
 * provisioned alike): an item, and every item sharing its partition key, can never go past it.
 */
export const PARTITION_WRITE_UNITS_PER_SECOND = 1000;
export const PARTITION_READ_UNITS_PER_SECOND = 3000;
export const DEFAULT_TARGET_JOBS_PER_SECOND = 10_000;

/** One access pattern's hottest key, per job and projected to the target rate (names are the bench's JSON contract). */
export interface HeatEntry {
  pattern: string;
  key: string;
  writesPerJob: number;
  readsPerJob: number;
  projectedWritesPerSecond: number;
  projectedReadsPerSecond: number;
  overLimit: boolean;
}

/** How much of a partition's second a key takes per job: the larger of its write and read shares. */
const load = (h: KeyHeat) =>
  Math.max(h.writeUnits / PARTITION_WRITE_UNITS_PER_SECOND, h.readUnits / PARTITION_READ_UNITS_PER_SECOND);

/**
 * The hottest key of each pattern, its units divided by the jobs that caused them, and those
 * multiplied by the target rate: traffic that scales with jobs scales with the rate. Sorted hottest
 * first. Traffic that scales with time instead (a tick's reads, a cached read per container) is
 * metered too but its projection is only as good as the run's rate; docs/guide/scale.md treats those apart.
 */
export function projectHeat(
  keys: readonly KeyHeat[],
  jobs: number,
  targetJobsPerSecond: number,
): HeatEntry[] {
  if (!(jobs > 0)) throw new RangeError(`jobs must be above 0, got ${jobs}`);
  const hottest = new Map<string, KeyHeat>();
  for (const h of keys) {
    const best = hottest.get(h.pattern);
    if (!best || load(h) > load(best)) hottest.set(h.pattern, h);
  }
  return [...hottest.values()]
    .sort((a, b) => load(b) - load(a))
    .map((h) => {
      const writesPerJob = h.writeUnits / jobs;
      const readsPerJob = h.readUnits / jobs;
      const projectedWritesPerSecond = writesPerJob * targetJobsPerSecond;
      const projectedReadsPerSecond = readsPerJob * targetJobsPerSecond;
      return {
        pattern: h.pattern,
        key: h.key,
        writesPerJob: round(writesPerJob),
        readsPerJob: round(readsPerJob),
        projectedWritesPerSecond: Math.round(projectedWritesPerSecond),
        projectedReadsPerSecond: Math.round(projectedReadsPerSecond),
        overLimit:
          projectedWritesPerSecond > PARTITION_WRITE_UNITS_PER_SECOND ||
          projectedReadsPerSecond > PARTITION_READ_UNITS_PER_SECOND,
      };
    });
}

const round = (x: number) => Number(x.toPrecision(4));
