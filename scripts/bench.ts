import { app } from "../app/index.ts";
import { benchKindNames, enqueuedKind } from "../bench/bench-app.ts";
import { ClientError } from "../lib/errors.ts";
import { parseBenchArgs, type RunShape, type SingleRun, usage } from "./bench-args.ts";
import { batchJson, printBatchTable, runBatchScenario } from "./bench-batch.ts";
import { GROUP_CHILDREN, GROUP_CONCURRENCY, GROUPS, round, TIMEOUT_MS, WARMUP } from "./bench-config.ts";
import { runDebounceScenario } from "./bench-debounce.ts";
import { analyseDebounce, debounceJson, printDebounceTable } from "./bench-debounce-report.ts";
import { runDurableScenario } from "./bench-durable.ts";
import { analyseDurable, durableJson, printDurableTable } from "./bench-durable-report.ts";
import { runFloodScenario } from "./bench-flood.ts";
import { analyseFlood, floodJson, printFloodTable } from "./bench-flood-report.ts";
import { analyseGroups, type GroupRun, runGroupScenario } from "./bench-group.ts";
import { groupJson, printGroupTable } from "./bench-group-report.ts";
import { heatJson, printHeatTable, runHeatScenarios } from "./bench-heat.ts";
import { runMatrix } from "./bench-matrix.ts";
import { printRedeliveryTable, redeliveryJson, runRedeliveryScenario } from "./bench-redelivery.ts";
import { printTable } from "./bench-report.ts";
import { analyseWindow, EngineRefusal, measureWindow, startBenchStack, windowJson } from "./bench-window.ts";
import { deployedSdkOption } from "./bundle-sizes.ts";
import { measureBudgets } from "./cold-start.ts";

/**
 * `npm run bench -- [flags]` (docs/architecture.md §11; `--help` lists the flags): N jobs of one app
 * kind (echo, 256-byte payloads by default) through the local stack on the kind's lane (fenced by
 * default), measured in one window (scripts/bench-window.ts); the table goes to stdout and the last
 * line is one JSON object (with --json, only that line).
 *
 * Then the group scenario (scripts/bench-group.ts) on the same stack: groups of children of the same
 * kind and size through engine.groups.create, each completed by the bench's own completion kind
 * (bench/bench-app.ts); then the batch scenario on a stack of its own (scripts/bench-batch.ts); then
 * the redelivery scenario on another (scripts/bench-redelivery.ts); then the debounce scenario on
 * another (scripts/bench-debounce.ts; `--scenario debounce` runs it alone); then the cold-start
 * budget of the Lambda bundles. The flood scenario (scripts/bench-flood.ts) runs only alone, with
 * `--scenario flood`: it takes minutes; so does the durable scenario (scripts/bench-durable.ts,
 * `--scenario durable`), which prints what it measured and its error when a window fails.
 *
 * `--matrix` runs payload sizes × lanes instead (scripts/bench-matrix.ts).
 *
 * Env (a flag wins): BENCH_JOBS (default 2000), BENCH_WARMUP (default 100), BENCH_TIMEOUT_MS (default
 * 90000), BENCH_LAMBDA_DURATION = "assumed" (default) | "measured": which Lambda duration the headline
 * cost uses, BENCH_GROUPS (default 5), BENCH_GROUP_CHILDREN (default 1000, at most 1000),
 * BENCH_GROUP_CONCURRENCY (groups in flight, default 1), BENCH_BATCH_JOBS (the batch scenario's
 * backlog, default 2000), BENCH_REDELIVERY_JOBS (each redelivery drain's backlog, default 1000).
 */

/** The group scenario's outcome: measured, or refused by the engine (a lane that can't be a group's child). */
type GroupOutcome = { run: GroupRun; logCounts: Map<string, number> } | { refusal: string };

async function run(shape: RunShape, jobs: number) {
  const bench = await startBenchStack(shape);
  const { stack, meter, ledger, completionStarts, logCounts } = bench;
  try {
    const single = await measureWindow(bench, jobs);

    // The scheduled functions cost per minute, not per job (`npm run bench:ops` prices them), and a
    // group completes without them: a tick (the local cleanup's sweep is a table Scan) stays out of
    // the group window, which is long enough to catch one.
    await stack.ticker.stop();
    // The group scenario, warmed up on one small group first (the group code's own first requests).
    const groupRun = (groups: number, children: number, concurrency: number, seqBase: number) =>
      runGroupScenario(stack, meter, ledger, completionStarts, {
        groups,
        children,
        concurrency,
        seqBase,
        timeoutMs: TIMEOUT_MS,
        kind: enqueuedKind(shape),
        payloadBytes: shape.payloadBytes,
      });
    let group: GroupOutcome;
    try {
      if (WARMUP > 0) await groupRun(1, Math.min(WARMUP, GROUP_CHILDREN), 1, 2_000_000);
      const groupLogStart = new Map(logCounts);
      const groups = await groupRun(GROUPS, GROUP_CHILDREN, GROUP_CONCURRENCY, 3_000_000);
      const groupLogCounts = new Map(
        [...logCounts]
          .map(([k, v]): [string, number] => [k, v - (groupLogStart.get(k) ?? 0)])
          .filter(([, v]) => v > 0),
      );
      group = { run: groups, logCounts: groupLogCounts };
    } catch (err) {
      // engine.groups.create refuses children of a lane that keeps no record of a success.
      if (!(err instanceof ClientError)) throw err;
      // One line per distinct issue: every child repeats the same one.
      const issues = [...new Set((err.issues ?? []).map((i) => i.message))].join("; ");
      group = { refusal: issues ? `${err.message} (${issues})` : err.message };
    }
    return { single, group };
  } finally {
    await stack.stop();
  }
}

async function runSingle(options: SingleRun): Promise<void> {
  const { jobs, json, ...shape } = options;
  const { single, group } = await run(shape, jobs);
  const analysis = analyseWindow(single);
  // On its own stack: a batch kind's queue gathers 100 records a delivery.
  const batch = await runBatchScenario();
  const redelivery = await runRedeliveryScenario();
  const debounce = analyseDebounce(await runDebounceScenario());
  // After the stack has stopped, so the emulators don't compete with the process starts for the CPU.
  const budgets = await measureBudgets();
  const groupAnalysis =
    "run" in group
      ? analyseGroups(group.run, {
          writesPerJob: analysis.ddbWrite.requests / analysis.n,
          wcuPerJob: analysis.wcu / analysis.n,
        })
      : undefined;
  if (!json) {
    printTable(analysis, shape, single.snap, budgets, single.logCounts);
    const groupNotes = shape.unique
      ? [
          "--unique: a group's children carry no uniqueKey (the group dedupes them), but the plain job they are compared with does.",
        ]
      : [];
    if ("run" in group && groupAnalysis) printGroupTable(groupAnalysis, group.logCounts, groupNotes);
    if ("refusal" in group)
      console.log(`\nskyforge bench: group scenario: n/a, the engine refuses it: ${group.refusal}`);
    printBatchTable(batch, analysis.cost.usdPerMillionJobs);
    printRedeliveryTable(redelivery);
    printDebounceTable(debounce);
  }
  console.log(
    JSON.stringify({
      ...windowJson(analysis, shape),
      bundleBytes: Object.fromEntries(budgets.functions.map((f) => [f.name, f.bytes])),
      // The names are the contract (issue 31): ratio = importMs / sdkOnlyMs, per function.
      coldStart: budgets.functions.map((f) => ({
        function: f.name,
        importMs: round(f.importMs, 1),
        sdkOnlyMs: round(f.sdkOnlyMs, 1),
        ratio: round(f.ratio, 2),
      })),
      coldStartBudget: {
        sdk: deployedSdkOption,
        bareNodeMs: round(budgets.bareNodeMs, 1),
        sizeBudgetMet: budgets.functions.every((f) => f.sizeOk),
        importBudgetMet: budgets.functions.every((f) => f.importOk),
      },
      group: groupAnalysis ? groupJson(groupAnalysis) : { refused: "refusal" in group ? group.refusal : "" },
      batch: batchJson(batch),
      redelivery: redeliveryJson(redelivery),
      debounce: debounceJson(debounce),
    }),
  );
}

const args = parseBenchArgs(process.argv.slice(2), {
  env: process.env,
  kinds: benchKindNames(),
  poolKinds: app.poolKinds.map((k) => k.name),
});
if (args.mode === "help") {
  console.log(usage);
} else if (args.mode === "error") {
  console.error(`bench: ${args.message}\n\n${usage}`);
  process.exitCode = 2;
} else if (args.mode === "matrix") {
  if (!(await runMatrix(args))) process.exitCode = 1;
} else if (args.mode === "debounce") {
  const debounce = analyseDebounce(await runDebounceScenario());
  if (!args.json) printDebounceTable(debounce);
  // The same entry as a single run's JSON line carries.
  console.log(JSON.stringify({ scenario: "debounce", debounce: debounceJson(debounce) }));
} else if (args.mode === "flood") {
  const flood = analyseFlood(await runFloodScenario());
  if (!args.json) printFloodTable(flood);
  console.log(JSON.stringify({ scenario: "flood", flood: floodJson(flood) }));
  if (!flood.limitsKept) {
    // The one figure that is a bug rather than a cost: a key ran more jobs at once than its limit.
    const over = flood.tenants.filter((t) => t.maxAtOnce > t.limit);
    console.error(
      `bench: flood scenario FAILED: over their limit: ${over.map((t) => `${t.tenant} ${t.maxAtOnce} > ${t.limit}`).join(", ")}`,
    );
    process.exitCode = 1;
  }
} else if (args.mode === "durable") {
  const durable = analyseDurable(await runDurableScenario());
  if (durable.error !== undefined) {
    console.error(`bench: durable scenario FAILED: ${durable.error}`);
    process.exitCode = 1;
  }
  if (!args.json) printDurableTable(durable);
  console.log(JSON.stringify({ scenario: "durable", durable: durableJson(durable) }));
} else if (args.mode === "heat") {
  const results = await runHeatScenarios({ ...args, timeoutMs: TIMEOUT_MS });
  if (!args.json) printHeatTable(results, args.targetJobsPerSecond);
  console.log(JSON.stringify(heatJson(results, args.targetJobsPerSecond)));
} else {
  try {
    await runSingle(args);
  } catch (err) {
    if (!(err instanceof EngineRefusal)) throw err;
    console.error(`bench: the engine refuses this run: ${err.message}`);
    process.exitCode = 2;
  }
}
