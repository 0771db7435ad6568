/**
 * The rate an app is built for (docs/guide/scale.md), and the table layout that follows from it: how many
 * status-index shards and how many partitions a group's slices spread over, so that no partition
 * key takes more than its share of AWS's per-partition limit at that rate.
 */
export interface ScaleDeclaration {
  /** The most jobs a second the app should take, all kinds together (default 1 000). */
  jobsPerSecond: number;
}

/** The rate the default layout (8 index shards) carries; an app that declares nothing gets it. */
export const DEFAULT_JOBS_PER_SECOND = 1000;
export const MAX_JOBS_PER_SECOND = 1_000_000;
/**
 * Half of AWS's per-partition write limit: ids hash unevenly over a few dozen partitions (the
 * hottest of 60 takes well above the mean in any one second), and bursts come on top of the rate.
 */
const PARTITION_WRITE_BUDGET = 1000 * 0.5;
/**
 * Index writes of a job that passes through the index: it enters (scheduled), is marked while the
 * reaper promotes it, and leaves; a dead job enters once. The worst case is every job scheduled.
 */
const INDEX_WRITES_PER_JOB = 3;
/** A child's one write to its slice when it ends (its group's own item is written once per slice). */
const SLICE_WRITES_PER_CHILD = 1;
/** Today's shard count, kept as the floor: a layout only ever grows (a shrink would strand items). */
const MIN_INDEX_SHARDS = 8;

export interface TableLayout {
  /** Status-index partitions per (queue, status); readers query every one. */
  indexShards: number;
  /** Partitions one group's slices spread over, so a group's children may end at the app's whole rate. */
  slicePartitions: number;
}

export function tableLayout(scale: ScaleDeclaration | undefined): TableLayout {
  const rate = scale?.jobsPerSecond ?? DEFAULT_JOBS_PER_SECOND;
  return {
    indexShards: Math.max(
      MIN_INDEX_SHARDS,
      Math.ceil((rate * INDEX_WRITES_PER_JOB) / PARTITION_WRITE_BUDGET),
    ),
    slicePartitions: Math.max(1, Math.ceil((rate * SLICE_WRITES_PER_CHILD) / PARTITION_WRITE_BUDGET)),
  };
}

export function scaleProblems(scale: ScaleDeclaration | undefined): string[] {
  if (scale === undefined) return [];
  const rate = scale.jobsPerSecond;
  if (typeof rate === "number" && Number.isFinite(rate) && rate > 0 && rate <= MAX_JOBS_PER_SECOND) return [];
  return [
    `scale.jobsPerSecond must be a number above 0 and at most ${MAX_JOBS_PER_SECOND}, got ${String(rate)}`,
  ];
}
