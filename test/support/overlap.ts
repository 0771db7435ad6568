/**
 * The most of these [start, end) intervals going at any one instant: the peak concurrency of runs,
 * from their own start and finish times (an end before a start at the same instant).
 */
export function mostAtOnce(intervals: readonly (readonly [start: number, end: number])[]): number {
  const edges = intervals
    .flatMap(([start, end]) => [
      [start, 1],
      [end, -1],
    ])
    .sort((a, b) => (a[0] as number) - (b[0] as number) || (a[1] as number) - (b[1] as number));
  let going = 0;
  let most = 0;
  for (const [, step] of edges) {
    going += step as number;
    most = Math.max(most, going);
  }
  return most;
}
