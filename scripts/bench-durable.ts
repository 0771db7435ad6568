import { marshall } from "@aws-sdk/util-dynamodb";
import {
  BENCH_INVOKE_KIND,
  BENCH_MAP_KIND,
  BENCH_SLEEP_KIND,
  BENCH_SMALL_STEPS_KIND,
  BENCH_STEPS_KIND,
  durableBenchApp,
  MAP_CONCURRENCY,
  MAP_STEPS_PER_JOB,
  SLEEP_SECONDS,
  SMALL_STEP_RESULT_BYTES,
  SMALL_STEPS_PER_JOB,
  STEP_RESULT_BYTES,
  STEPS_PER_JOB,
} from "../bench/durable-kind.ts";
import { NOOP_KIND } from "../bench/noop-kind.ts";
import { itemBytes } from "../bench/write-ledger.ts";
import type { JobItem } from "../lib/store/job-item.ts";
import { BATCH, intEnv, payload, TIMEOUT_MS } from "./bench-config.ts";
import { type JobsSide, type JobsWindow, jobsWindow, openJobsSide } from "./bench-jobs.ts";

/**
 * The durable scenario (`npm run bench -- --scenario durable`; docs/guide/durable-jobs.md "Cost"): on a
 * local stack of its own, five metered windows of JOBS jobs each (scripts/bench-jobs.ts):
 * 1. plain: the no-op kind (fenced), what a job costs without durable calls;
 * 2. steps: a kind recording STEPS_PER_JOB steps of ~100 bytes of JSON each (its item outgrows 1 KB);
 * 3. smallSteps: a kind recording SMALL_STEPS_PER_JOB steps of ~40 bytes (its item stays under 1 KB);
 * 4. sleeps: a kind with one 1 s sleep and nothing else (it wakes by a delayed SQS message);
 * 5. map: a kind recording MAP_STEPS_PER_JOB steps of the steps kind's shape in one `ctx.map`, side by side.
 * 6. invoke: a kind invoking one child of the no-op kind (ctx.invoke), so each job is a parent, its
 *    child and the parent's resume (the children's requests fall in the window too).
 * A window that fails ends the scenario: the windows measured before it are kept, with the error,
 * so the report still prints what was measured.
 */

/** BENCH_DURABLE_JOBS: jobs in each window (the bench's own test runs a small one). */
export const JOBS = intEnv("BENCH_DURABLE_JOBS", 500, 1);
/** Each kind's warm-up window (unreported): the first requests of its code path. */
const WARMUP_JOBS = Math.min(JOBS, BATCH);

export const WINDOWS = ["plain", "steps", "smallSteps", "sleeps", "map", "invoke"] as const;
export type WindowName = (typeof WINDOWS)[number];
/** Each window's kind, and the steps its jobs record (a sleep is recorded as one). */
const windowKinds: Record<WindowName, { kind: string; steps: number }> = {
  plain: { kind: NOOP_KIND, steps: 0 },
  steps: { kind: BENCH_STEPS_KIND, steps: STEPS_PER_JOB },
  smallSteps: { kind: BENCH_SMALL_STEPS_KIND, steps: SMALL_STEPS_PER_JOB },
  sleeps: { kind: BENCH_SLEEP_KIND, steps: 1 },
  map: { kind: BENCH_MAP_KIND, steps: MAP_STEPS_PER_JOB },
  invoke: { kind: BENCH_INVOKE_KIND, steps: 1 },
};

/** A measured window without its items (checked, then dropped), and the done items' mean size. */
export type DurableWindow = Omit<JobsWindow, "items"> & { itemBytes: number };

/** A done job item's size as DynamoDB bills its writes (1 WCU per started KB). */
const sizeOf = (item: JobItem) => itemBytes(marshall(item, { removeUndefinedValues: true }));

/** Every job of the window ran its durable calls as the kind says: else the window measured something else. */
function check(name: WindowName, items: readonly JobItem[]): void {
  for (const item of items) {
    const recorded = Object.keys(item.steps ?? {}).length;
    const expected = windowKinds[name].steps;
    if (recorded !== expected)
      throw new Error(`durable scenario: ${name} job ${item.id} has ${recorded} steps, not ${expected}`);
    if (item.attempts !== 1)
      throw new Error(`durable scenario: ${name} job ${item.id} took ${item.attempts} attempts, not 1`);
  }
}

async function measure(side: JobsSide, name: WindowName, jobs: number, seqBase: number) {
  const { kind } = windowKinds[name];
  const { items, ...window } = await jobsWindow(
    side,
    jobs,
    (i) => ({ kind, payload: payload(seqBase + i, 256) }),
    TIMEOUT_MS,
  );
  check(name, items);
  const bytes = items.reduce((n, item) => n + sizeOf(item), 0);
  return { ...window, itemBytes: items.length === 0 ? 0 : bytes / items.length };
}

export interface DurableRun {
  jobs: number;
  stepsPerJob: number;
  sleepSeconds: number;
  stepResultBytes: number;
  smallStepsPerJob: number;
  smallStepResultBytes: number;
  /** The map window's steps per job, and how many of them run at once. */
  mapStepsPerJob: number;
  mapConcurrency: number;
  /** Ticks run because a window stalled (none expected: every sleep wakes by its own message). */
  ticks: number;
  windows: Partial<Record<WindowName, DurableWindow>>;
  /** Why the scenario stopped early, if it did. */
  error?: string;
}

export async function runDurableScenario(jobs = JOBS): Promise<DurableRun> {
  const run: DurableRun = {
    jobs,
    stepsPerJob: STEPS_PER_JOB,
    sleepSeconds: SLEEP_SECONDS,
    stepResultBytes: STEP_RESULT_BYTES,
    smallStepsPerJob: SMALL_STEPS_PER_JOB,
    smallStepResultBytes: SMALL_STEP_RESULT_BYTES,
    mapStepsPerJob: MAP_STEPS_PER_JOB,
    mapConcurrency: MAP_CONCURRENCY,
    ticks: 0,
    windows: {},
  };
  let side: JobsSide | undefined;
  try {
    side = await openJobsSide("durable", durableBenchApp());
    for (const [i, name] of WINDOWS.entries()) await measure(side, name, WARMUP_JOBS, 1_000_000 * (i + 1));
    side.ticks = 0;
    for (const [i, name] of WINDOWS.entries())
      run.windows[name] = await measure(side, name, jobs, 1_000_000 * (i + 5));
  } catch (err) {
    run.error = err instanceof Error ? err.message : String(err);
  } finally {
    run.ticks = side?.ticks ?? 0;
    await side?.stop().catch((err: unknown) => {
      run.error ??= `the stack did not stop: ${err instanceof Error ? err.message : String(err)}`;
    });
  }
  return run;
}
