import { lambdaGbSeconds } from "../bench/cost-estimate.ts";
import { lambdaDurablePrices, prices } from "../bench/prices.ts";
import { round, WORKER_MEMORY_MB } from "./bench-config.ts";
import { ASSUMED_SEQUENTIAL_REQUEST_MS } from "./bench-debounce.ts";
import type { DurableRun, DurableWindow, WindowName } from "./bench-durable.ts";
import { perJob } from "./bench-jobs.ts";
import { costPerUnit, type MeteredUsage } from "./bench-usage.ts";

/**
 * The durable scenario's figures (scripts/bench-durable.ts), for the table and the JSON line: each
 * window's $/M jobs, and a step's and a sleep's share: what the steps window's job costs beyond the
 * plain job's, over its steps, and what the sleeps window's job costs beyond it.
 */

/** Issue #28's goal: a step at most $1 per million, an eighth of Lambda durable functions' price. */
export const GOAL_USD_PER_MILLION_STEPS = 1;

/**
 * The assumed worker time (ASSUMED_WORKER_BATCH_MS) is a claim and a finalize; a job's steps are
 * that many more writes one after another, so an invocation lasts one round trip longer for each
 * (its records run side by side: the batch lasts as long as one job's steps).
 */
export function withStepTime(m: MeteredUsage, stepsPerJob: number): MeteredUsage {
  const extra = lambdaGbSeconds(WORKER_MEMORY_MB, stepsPerJob * ASSUMED_SEQUENTIAL_REQUEST_MS);
  return { ...m, gbs: { ...m.gbs, assumed: m.gbs.assumed + m.workerInvocations * extra } };
}

/** One window's figures per job; `stepsPerJob` lengthens its assumed Lambda time (withStepTime). */
export function windowFigures(w: DurableWindow, stepsPerJob = 0) {
  const priced = costPerUnit(stepsPerJob > 0 ? withStepTime(w.whole, stepsPerJob) : w.whole, w.jobs);
  return {
    ...perJob(w, w.jobs),
    itemBytes: w.itemBytes,
    usdPerMillion: priced.cost.usdPerMillionJobs,
    usdPerMillionMeasured: priced.variants.measured.asCounted.usdPerMillionJobs,
  };
}

export type JobFigures = ReturnType<typeof windowFigures>;
type Numeric = { [K in keyof JobFigures]: JobFigures[K] extends number ? K : never }[keyof JobFigures];

/**
 * Pure: a step's and a sleep's figures from the windows' per-job figures (null where a window is
 * missing). A step: (steps job − plain job) / steps; a sleep: sleeps job − plain job. $/M jobs are
 * $/job × 1e6, so their difference over the steps is $/M steps. The status-index units are
 * estimates dynalite never bills, so they stay out of the $ and are priced apart (withIndex).
 */
export function deriveDurable(per: Partial<Record<WindowName, JobFigures>>, stepsPerJob: number) {
  const { plain, steps, sleeps } = per;
  const share = (w: JobFigures | undefined, over: number) => (k: Numeric) =>
    w && plain ? (w[k] - plain[k]) / over : null;
  const step = share(steps, stepsPerJob);
  const sleep = share(sleeps, 1);
  const perOp = (of: (k: Numeric) => number | null) => ({
    dynamodbWrites: of("writes"),
    wcu: of("wcu"),
    jobItemWrites: of("jobItemWrites"),
    jobItemWcu: of("jobItemWcu"),
    indexWcu: of("indexWcu"),
    dynamodbReads: of("reads"),
    sqsRequests: of("sqsBilled"),
    sends: of("sends"),
    receives: of("receives"),
    lambdaInvocations: of("lambdaInvocations"),
  });
  const withIndex = (usd: number | null, indexWcu: number | null) =>
    usd === null || indexWcu === null
      ? null
      : usd + indexWcu * prices.dynamodb.usdPerMillionWriteRequestUnits;
  const usdPerMillionSteps = step("usdPerMillion");
  const usdPerMillionSleeps = sleep("usdPerMillion");
  const lambda = lambdaDurablePrices.usdPerMillionOperations;
  return {
    usdPerMillionSteps,
    usdPerMillionSleeps,
    usdPerMillionStepsWithIndex: withIndex(usdPerMillionSteps, step("indexWcu")),
    usdPerMillionSleepsWithIndex: withIndex(usdPerMillionSleeps, sleep("indexWcu")),
    perStep: perOp(step),
    perSleep: perOp(sleep),
    goalUsdPerMillionSteps: GOAL_USD_PER_MILLION_STEPS,
    goalMet: usdPerMillionSteps === null ? null : usdPerMillionSteps <= GOAL_USD_PER_MILLION_STEPS,
    lambdaDurableUsdPerMillionOperations: lambda,
    /** How many times cheaper than a Lambda durable operation. */
    timesCheaperThanLambdaDurable: {
      step: usdPerMillionSteps === null ? null : lambda / usdPerMillionSteps,
      sleep: usdPerMillionSleeps === null ? null : lambda / usdPerMillionSleeps,
    },
  };
}

export function analyseDurable(r: DurableRun) {
  const per: Partial<Record<WindowName, JobFigures>> = {};
  const { plain, steps, sleeps } = r.windows;
  if (plain) per.plain = windowFigures(plain);
  if (steps) per.steps = windowFigures(steps, r.stepsPerJob);
  if (sleeps) per.sleeps = windowFigures(sleeps);
  return { ...r, per, derived: deriveDurable(per, r.stepsPerJob) };
}

export type DurableAnalysis = ReturnType<typeof analyseDurable>;

const r4 = (x: number | null) => (x === null ? null : round(x, 4));
const rounded = <T extends Record<string, number | null>>(o: T) =>
  Object.fromEntries(Object.entries(o).map(([k, v]) => [k, r4(v)])) as { [K in keyof T]: number | null };

/** The JSON line's `durable` entry: every figure measured, null where its window is missing. */
export const durableJson = (a: DurableAnalysis) => {
  const d = a.derived;
  return {
    jobs: a.jobs,
    stepsPerJob: a.stepsPerJob,
    stepResultBytes: a.stepResultBytes,
    sleepSeconds: a.sleepSeconds,
    usdPerMillionJobs: {
      plain: r4(a.per.plain?.usdPerMillion ?? null),
      steps: r4(a.per.steps?.usdPerMillion ?? null),
      sleeps: r4(a.per.sleeps?.usdPerMillion ?? null),
    },
    /** Lease renewals per job: none expected (BENCH_LEASE_SECONDS); each one costs a write and a request. */
    renewalsPerJob: {
      plain: r4(a.per.plain?.renewals ?? null),
      steps: r4(a.per.steps?.renewals ?? null),
      sleeps: r4(a.per.sleeps?.renewals ?? null),
    },
    /** A done job item's mean size: a step's write is billed by the KB of the item it lands in. */
    jobItemBytes: {
      plain: r4(a.per.plain?.itemBytes ?? null),
      steps: r4(a.per.steps?.itemBytes ?? null),
      sleeps: r4(a.per.sleeps?.itemBytes ?? null),
    },
    usdPerMillionSteps: r4(d.usdPerMillionSteps),
    usdPerMillionSleeps: r4(d.usdPerMillionSleeps),
    usdPerMillionStepsWithIndex: r4(d.usdPerMillionStepsWithIndex),
    usdPerMillionSleepsWithIndex: r4(d.usdPerMillionSleepsWithIndex),
    perStep: rounded(d.perStep),
    perSleep: rounded(d.perSleep),
    goalUsdPerMillionSteps: d.goalUsdPerMillionSteps,
    goalMet: d.goalMet,
    lambdaDurableUsdPerMillionOperations: d.lambdaDurableUsdPerMillionOperations,
    timesCheaperThanLambdaDurable: rounded(d.timesCheaperThanLambdaDurable),
    ticks: a.ticks,
    ...(a.error !== undefined ? { error: a.error } : {}),
  };
};

const usd = (x: number | null | undefined) => (x === null || x === undefined ? "n/a" : `$${x.toFixed(4)}`);
const num = (x: number | null | undefined) => (x === null || x === undefined ? "n/a" : `${round(x, 4)}`);

export function printDurableTable(a: DurableAnalysis): void {
  const { per, derived: d } = a;
  const job = (w: JobFigures | undefined) =>
    w
      ? `${usd(w.usdPerMillion)}/M jobs  wcu ${num(w.wcu)} (${num(w.writes)} writes, job item ${num(w.jobItemWrites)}, done item ${Math.round(w.itemBytes)} B)  sqs ${num(w.sqsBilled)}  lambda ${num(w.lambdaInvocations)}  renewals ${num(w.renewals)}`
      : "n/a (not measured)";
  const op = (o: typeof d.perStep) =>
    `writes ${num(o.dynamodbWrites)} (job item ${num(o.jobItemWrites)}, ${num(o.jobItemWcu)} WCU)  wcu ${num(o.wcu)}  index wcu ${num(o.indexWcu)} (est.)  sqs ${num(o.sqsRequests)} (sends ${num(o.sends)}, receives ${num(o.receives)})  lambda ${num(o.lambdaInvocations)}`;
  const times = (x: number | null) => (x === null ? "n/a" : `${round(x, 1)}×`);
  const rows: [string, string][] = [
    [
      "windows",
      `${a.jobs} jobs each; steps: ${a.stepsPerJob} steps of ~${a.stepResultBytes} B; sleeps: one ${a.sleepSeconds} s sleep`,
    ],
    ["plain job (bench-noop)", job(per.plain)],
    [`${a.stepsPerJob}-step job`, job(per.steps)],
    ["sleeping job", job(per.sleeps)],
    ["per step", op(d.perStep)],
    ["per sleep", op(d.perSleep)],
    [
      "usdPerMillionSteps",
      `${usd(d.usdPerMillionSteps)}  (goal ≤ $${d.goalUsdPerMillionSteps}: ${d.goalMet === null ? "n/a" : d.goalMet ? "met" : "NOT met"}; ${times(d.timesCheaperThanLambdaDurable.step)} cheaper than Lambda durable's $${d.lambdaDurableUsdPerMillionOperations}/M; with the index estimate ${usd(d.usdPerMillionStepsWithIndex)})`,
    ],
    [
      "usdPerMillionSleeps",
      `${usd(d.usdPerMillionSleeps)}  (${times(d.timesCheaperThanLambdaDurable.sleep)} cheaper than Lambda durable's $${d.lambdaDurableUsdPerMillionOperations}/M; with the index estimate ${usd(d.usdPerMillionSleepsWithIndex)})`,
    ],
  ];
  if (a.ticks > 0) rows.push(["ticks", `${a.ticks} (a window stalled: the reaper's tick ran)`]);
  if (a.error !== undefined) rows.push(["error", a.error]);
  const width = Math.max(...rows.map(([k]) => k.length));
  console.log("\nskyforge bench: durable scenario, local stack");
  for (const [k, v] of rows) console.log(`  ${k.padEnd(width)}  ${v}`);
}
