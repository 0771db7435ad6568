import { lambdaGbSeconds } from "../bench/cost-estimate.ts";
import { lambdaDurablePrices, prices } from "../bench/prices.ts";
import { round, WORKER_MEMORY_MB } from "./bench-config.ts";
import { ASSUMED_SEQUENTIAL_REQUEST_MS } from "./bench-debounce.ts";
import { type DurableRun, type DurableWindow, WINDOWS, type WindowName } from "./bench-durable.ts";
import { perJob } from "./bench-jobs.ts";
import { costPerUnit, type MeteredUsage } from "./bench-usage.ts";

/**
 * The durable scenario's figures (scripts/bench-durable.ts), for the table and the JSON line: each
 * window's $/M jobs, and a step's, a sleep's and a child invocation's share: what the steps window's
 * job costs beyond the plain job's, over its steps, and what the sleeps and invoke windows' jobs cost
 * beyond it; a parallel step's (`ctx.map`), the map window's job beyond the plain job's, over its steps.
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

/** Steps per job of the step windows: the grown item's, the small one's and the map's. */
export interface StepCounts {
  steps: number;
  smallSteps: number;
  map: number;
}

/**
 * Pure: a step's and a sleep's figures from the windows' per-job figures (null where a window is
 * missing). A step: (steps job − plain job) / steps, for the grown item (steps) and the small one
 * (smallSteps); a sleep: sleeps job − plain job; a child invocation: invoke job − plain job (the
 * parent's invoke, the child's whole run and the parent's resume, the parent itself a plain job). $/M jobs are $/job × 1e6, so their difference over
 * the steps is $/M steps. The status-index units are estimates dynalite never bills, so they stay out
 * of the $ and are priced apart (withIndex).
 */
export function deriveDurable(per: Partial<Record<WindowName, JobFigures>>, counts: StepCounts) {
  const { plain, steps, smallSteps, sleeps, map, invoke } = per;
  const share = (w: JobFigures | undefined, over: number) => (k: Numeric) =>
    w && plain ? (w[k] - plain[k]) / over : null;
  const step = share(steps, counts.steps);
  const smallStep = share(smallSteps, counts.smallSteps);
  const sleep = share(sleeps, 1);
  const mapStep = share(map, counts.map);
  const childInvocation = share(invoke, 1);
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
  const usdPerMillionSmallSteps = smallStep("usdPerMillion");
  const usdPerMillionSleeps = sleep("usdPerMillion");
  const usdPerMillionMapSteps = mapStep("usdPerMillion");
  const usdPerMillionChildInvocations = childInvocation("usdPerMillion");
  const lambda = lambdaDurablePrices.usdPerMillionOperations;
  const meets = (usd: number | null) => (usd === null ? null : usd <= GOAL_USD_PER_MILLION_STEPS);
  const cheaper = (usd: number | null) => (usd === null ? null : lambda / usd);
  return {
    usdPerMillionSteps,
    usdPerMillionSmallSteps,
    usdPerMillionSleeps,
    usdPerMillionMapSteps,
    usdPerMillionChildInvocations,
    usdPerMillionStepsWithIndex: withIndex(usdPerMillionSteps, step("indexWcu")),
    usdPerMillionSleepsWithIndex: withIndex(usdPerMillionSleeps, sleep("indexWcu")),
    perStep: perOp(step),
    perSmallStep: perOp(smallStep),
    perSleep: perOp(sleep),
    perMapStep: perOp(mapStep),
    perChildInvocation: perOp(childInvocation),
    goalUsdPerMillionSteps: GOAL_USD_PER_MILLION_STEPS,
    /** The goal against each step window: the grown item's steps and the small item's. */
    goalMet: { steps: meets(usdPerMillionSteps), smallSteps: meets(usdPerMillionSmallSteps) },
    lambdaDurableUsdPerMillionOperations: lambda,
    /** How many times cheaper than a Lambda durable operation. */
    timesCheaperThanLambdaDurable: {
      step: cheaper(usdPerMillionSteps),
      smallStep: cheaper(usdPerMillionSmallSteps),
      sleep: cheaper(usdPerMillionSleeps),
      mapStep: cheaper(usdPerMillionMapSteps),
      childInvocation: cheaper(usdPerMillionChildInvocations),
    },
  };
}

export function analyseDurable(r: DurableRun) {
  const per: Partial<Record<WindowName, JobFigures>> = {};
  const { plain, steps, smallSteps, sleeps, map, invoke } = r.windows;
  if (plain) per.plain = windowFigures(plain);
  if (steps) per.steps = windowFigures(steps, r.stepsPerJob);
  if (smallSteps) per.smallSteps = windowFigures(smallSteps, r.smallStepsPerJob);
  if (sleeps) per.sleeps = windowFigures(sleeps);
  // Side by side, its steps add one round trip a lane's turn, not one a step; the first step goes
  // alone (it writes the job's steps map: lib/durable/parallel.ts), one more.
  if (map) per.map = windowFigures(map, 1 + Math.ceil((r.mapStepsPerJob - 1) / r.mapConcurrency));
  if (invoke) per.invoke = windowFigures(invoke);
  return {
    ...r,
    per,
    derived: deriveDurable(per, {
      steps: r.stepsPerJob,
      smallSteps: r.smallStepsPerJob,
      map: r.mapStepsPerJob,
    }),
  };
}

export type DurableAnalysis = ReturnType<typeof analyseDurable>;

const r4 = (x: number | null) => (x === null ? null : round(x, 4));
const rounded = <T extends Record<string, number | null>>(o: T) =>
  Object.fromEntries(Object.entries(o).map(([k, v]) => [k, r4(v)])) as { [K in keyof T]: number | null };

/** The JSON line's `durable` entry: every figure measured, null where its window is missing. */
export const durableJson = (a: DurableAnalysis) => {
  const d = a.derived;
  const byWindow = (of: (w: JobFigures | undefined) => number | undefined) =>
    Object.fromEntries(WINDOWS.map((name) => [name, r4(of(a.per[name]) ?? null)])) as Record<
      WindowName,
      number | null
    >;
  return {
    jobs: a.jobs,
    stepsPerJob: a.stepsPerJob,
    stepResultBytes: a.stepResultBytes,
    smallStepsPerJob: a.smallStepsPerJob,
    smallStepResultBytes: a.smallStepResultBytes,
    sleepSeconds: a.sleepSeconds,
    mapStepsPerJob: a.mapStepsPerJob,
    mapConcurrency: a.mapConcurrency,
    usdPerMillionJobs: byWindow((w) => w?.usdPerMillion),
    /** Lease renewals per job: none expected (BENCH_LEASE_SECONDS); each one costs a write and a request. */
    renewalsPerJob: byWindow((w) => w?.renewals),
    /** A done job item's mean size: a step's write is billed by the KB of the item it lands in. */
    jobItemBytes: byWindow((w) => w?.itemBytes),
    usdPerMillionSteps: r4(d.usdPerMillionSteps),
    usdPerMillionSmallSteps: r4(d.usdPerMillionSmallSteps),
    usdPerMillionSleeps: r4(d.usdPerMillionSleeps),
    usdPerMillionMapSteps: r4(d.usdPerMillionMapSteps),
    /** A child invocation (ctx.invoke): the parent's invoke, the child's run and the parent's resume. */
    usdPerMillionChildInvocations: r4(d.usdPerMillionChildInvocations),
    usdPerMillionStepsWithIndex: r4(d.usdPerMillionStepsWithIndex),
    usdPerMillionSleepsWithIndex: r4(d.usdPerMillionSleepsWithIndex),
    perStep: rounded(d.perStep),
    perSmallStep: rounded(d.perSmallStep),
    perSleep: rounded(d.perSleep),
    perMapStep: rounded(d.perMapStep),
    perChildInvocation: rounded(d.perChildInvocation),
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
  const goal = (met: boolean | null) => (met === null ? "n/a" : met ? "met" : "NOT met");
  const rows: [string, string][] = [
    [
      "windows",
      `${a.jobs} jobs each; steps: ${a.stepsPerJob} of ~${a.stepResultBytes} B; small steps: ${a.smallStepsPerJob} of ~${a.smallStepResultBytes} B; sleeps: one ${a.sleepSeconds} s sleep; map: ${a.mapStepsPerJob} of ~${a.stepResultBytes} B, ${a.mapConcurrency} at once; invoke: one child`,
    ],
    ["plain job (bench-noop)", job(per.plain)],
    [`${a.stepsPerJob}-step job`, job(per.steps)],
    [`${a.smallStepsPerJob}-small-step job`, job(per.smallSteps)],
    ["sleeping job", job(per.sleeps)],
    [`${a.mapStepsPerJob}-step ctx.map job`, job(per.map)],
    ["invoking job (one child)", job(per.invoke)],
    ["per step", op(d.perStep)],
    ["per small step", op(d.perSmallStep)],
    ["per sleep", op(d.perSleep)],
    ["per parallel step", op(d.perMapStep)],
    ["per child invocation", op(d.perChildInvocation)],
    [
      "usdPerMillionSteps",
      `${usd(d.usdPerMillionSteps)}  (goal ≤ $${d.goalUsdPerMillionSteps}: ${goal(d.goalMet.steps)}; ${times(d.timesCheaperThanLambdaDurable.step)} cheaper than Lambda durable's $${d.lambdaDurableUsdPerMillionOperations}/M; with the index estimate ${usd(d.usdPerMillionStepsWithIndex)})`,
    ],
    [
      "usdPerMillionSmallSteps",
      `${usd(d.usdPerMillionSmallSteps)}  (goal ≤ $${d.goalUsdPerMillionSteps}: ${goal(d.goalMet.smallSteps)}; ${times(d.timesCheaperThanLambdaDurable.smallStep)} cheaper than Lambda durable's)`,
    ],
    [
      "usdPerMillionSleeps",
      `${usd(d.usdPerMillionSleeps)}  (${times(d.timesCheaperThanLambdaDurable.sleep)} cheaper than Lambda durable's $${d.lambdaDurableUsdPerMillionOperations}/M; with the index estimate ${usd(d.usdPerMillionSleepsWithIndex)})`,
    ],
    [
      "usdPerMillionMapSteps",
      `${usd(d.usdPerMillionMapSteps)}  (${times(d.timesCheaperThanLambdaDurable.mapStep)} cheaper than Lambda durable's $${d.lambdaDurableUsdPerMillionOperations}/M)`,
    ],
    [
      "usdPerMillionChildInvocations",
      `${usd(d.usdPerMillionChildInvocations)}  (parent's invoke + child's run + resume; ${times(d.timesCheaperThanLambdaDurable.childInvocation)} cheaper than Lambda durable's $${d.lambdaDurableUsdPerMillionOperations}/M operations)`,
    ],
  ];
  if (a.ticks > 0) rows.push(["ticks", `${a.ticks} (a window stalled: the reaper's tick ran)`]);
  if (a.error !== undefined) rows.push(["error", a.error]);
  const width = Math.max(...rows.map(([k]) => k.length));
  console.log("\nskyforge bench: durable scenario, local stack");
  for (const [k, v] of rows) console.log(`  ${k.padEnd(width)}  ${v}`);
}
