import { ParallelStepError } from "../durable-errors.ts";
import { DurableMisuseError } from "../errors.ts";
import { type DurableContext, stepNameProblem } from "../job/durable.ts";
import {
  DEFAULT_PARALLEL_CONCURRENCY,
  MAX_PARALLEL_CONCURRENCY,
  MAX_PARALLEL_STEPS,
  type ParallelOptions,
  parallelStepName,
} from "../job/parallel.ts";

/**
 * `ctx.parallel` and `ctx.map` (docs/architecture.md §22, "Parallel steps"): each function or item
 * is a step of the run's own, named `<call>[<index>]`, so it holds the job's journal bounds, the
 * shared inline budget and a suspend's wait for the steps in flight as any step does, and is
 * recorded once: a replay returns the recorded ones without running them and runs only the others.
 * At most `concurrency` lanes run steps; each takes the next index in turn, so the steps start in
 * index order on every run, whatever order they end in (and are recorded in).
 * A failed step doesn't stop the others: the call fails once all have settled, with the lowest
 * failed index (ParallelStepError), and a retry of the job runs only the steps not recorded.
 */

/** What of the run the calls use (lib/durable/durable-run.ts's DurableRun). */
export interface ParallelRun {
  step<T>(name: string, fn: () => Promise<T> | T): Promise<T>;
  /** Whether a sleep or a wait is ending the run: then no lane starts another step. */
  suspending(): boolean;
  /** Whether the job item has a steps map yet, as the run knows now. */
  mapExists(): boolean;
}

type ParallelCalls = Pick<DurableContext, "parallel" | "map">;

export function parallelSteps(run: ParallelRun): ParallelCalls {
  return {
    parallel: (async (name: string, fns: readonly (() => unknown)[], options?: ParallelOptions) => {
      const concurrency = checkParallel("parallel", name, fns, undefined, options);
      return runSteps(run, "parallel", name, fns, concurrency);
    }) as ParallelCalls["parallel"],
    map: async (name, items, fn, options) => {
      const concurrency = checkParallel("map", name, items, fn, options);
      return runSteps(
        run,
        "map",
        name,
        Array.from(items, (item, index) => () => fn(item, index)),
        concurrency,
      );
    },
  };
}

async function runSteps<T>(
  run: ParallelRun,
  method: "parallel" | "map",
  name: string,
  fns: readonly (() => Promise<T> | T)[],
  concurrency: number,
): Promise<T[]> {
  const results: T[] = new Array(fns.length);
  const failures: { index: number; error: unknown }[] = [];
  let next = 0;
  const runNext = async (): Promise<void> => {
    // The run is ending: the steps not started run after its wake, never twice.
    if (run.suspending()) return new Promise<never>(() => {});
    const index = next++;
    const fn = fns[index] as () => Promise<T> | T;
    try {
      results[index] = await run.step(parallelStepName(name, index), fn);
    } catch (error) {
      failures.push({ index, error });
    }
  };
  const lane = async (): Promise<void> => {
    while (next < fns.length) await runNext();
  };
  // A job's first record writes its steps map: steps side by side would each try to, and all but one
  // write again (a refused write is billed too). So the first step goes alone.
  if (!run.mapExists() && fns.length > 1) await runNext();
  await Promise.all(Array.from({ length: Math.min(concurrency, fns.length - next) }, lane));
  if (failures.length === 0) return results;
  // A misuse ends the job at once whichever step met it, so it is the one the error carries.
  const decisive =
    failures.find((f) => f.error instanceof DurableMisuseError) ??
    failures.reduce((low, f) => (f.index < low.index ? f : low));
  throw new ParallelStepError(method, name, decisive.index, failures.length, decisive.error);
}

/**
 * The call's concurrency, checked with its name, its inputs and its options: each problem is the
 * same on every attempt, so a DurableMisuseError naming the call (`map "<name>"`) ends the job at once.
 */
export function checkParallel(
  call: "parallel" | "map",
  name: string,
  inputs: unknown,
  fn: unknown,
  options: ParallelOptions | undefined,
): number {
  const nameProblem = stepNameProblem(name);
  if (nameProblem) throw new DurableMisuseError(`${call}: ${nameProblem}`);
  const what = `${call} "${name}"`;
  if (!Array.isArray(inputs))
    throw new DurableMisuseError(`${what}: ${call === "map" ? "items" : "fns"} must be an array`);
  if (inputs.length > MAX_PARALLEL_STEPS)
    throw new DurableMisuseError(
      `${what}: ${inputs.length} ${call === "map" ? "items" : "functions"} is over ${MAX_PARALLEL_STEPS}`,
    );
  if (call === "map" && typeof fn !== "function")
    throw new DurableMisuseError(`${what}: its step function must be a function`);
  if (call === "parallel") {
    const index = inputs.findIndex((f) => typeof f !== "function");
    if (index >= 0) throw new DurableMisuseError(`${what}: fns[${index}] is not a function`);
  }
  const concurrency = options?.concurrency ?? DEFAULT_PARALLEL_CONCURRENCY;
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > MAX_PARALLEL_CONCURRENCY)
    throw new DurableMisuseError(
      `${what}: concurrency ${String(concurrency)} is outside 1..${MAX_PARALLEL_CONCURRENCY}`,
    );
  if (inputs.length > 0) {
    const last = stepNameProblem(parallelStepName(name, inputs.length - 1));
    if (last) throw new DurableMisuseError(`${what}: its steps' names would be too long: ${last}`);
  }
  return concurrency;
}
