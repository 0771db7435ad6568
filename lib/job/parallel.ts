/**
 * Parallel steps (`ctx.parallel`, `ctx.map`; docs/guide/durable-jobs.md "Parallel steps"): one call
 * runs many steps side by side, at most `concurrency` at a time, each recorded as a step of its own
 * named `<call>[<index>]`, so a replay returns the recorded ones and runs only the others.
 */

/**
 * Steps in flight at once when the call gives no `concurrency`: enough to overlap I/O-bound steps
 * (each is a call out and one record write), few enough that the run's records don't pile up on
 * the job item's partition at once.
 */
export const DEFAULT_PARALLEL_CONCURRENCY = 10;
export const MAX_PARALLEL_CONCURRENCY = 100;
/** The most steps one call runs: the journal holds 1 000 records in all (MAX_STEPS_PER_JOB). */
export const MAX_PARALLEL_STEPS = 1_000;

export interface ParallelOptions {
  /** At most this many of the call's steps in flight at once: 1..100, default 10. */
  concurrency?: number;
}

/** The results of `ctx.parallel(name, fns)`: each function's, in the order of `fns`. */
export type ParallelResults<F extends readonly (() => unknown)[]> = {
  -readonly [K in keyof F]: Awaited<ReturnType<F[K]>>;
};

/** The name of a call's step at `index`: the call's name and the index, the same on every run. */
export const parallelStepName = (call: string, index: number): string => `${call}[${index}]`;
