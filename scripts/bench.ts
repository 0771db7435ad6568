import { app } from "../app/index.ts";
import { benchKindNames } from "../bench/bench-app.ts";
import { runScenarios, type Scenario } from "./bench-all.ts";
import { ALL_SCENARIOS, type AllRun, parseBenchArgs, type ScenarioName, usage } from "./bench-args.ts";
import { TIMEOUT_MS } from "./bench-config.ts";
import { heatJson, printHeatTable, runHeatScenarios } from "./bench-heat.ts";
import { runMatrix } from "./bench-matrix.ts";
import { priorityScenario } from "./bench-priorities.ts";
import { realtimeScenario } from "./bench-realtime.ts";
import {
  batchScenario,
  coldStartScenario,
  debounceScenario,
  durableScenario,
  floodScenario,
  limitsScenario,
  redeliveryScenario,
  windowScenario,
} from "./bench-scenarios.ts";
import { searchScenario } from "./bench-search.ts";
import { EngineRefusal } from "./bench-window.ts";

/**
 * `npm run bench -- [flags]` (docs/architecture.md §11; `--help` lists the flags). A run measures
 * what its flags ask, and only that:
 *
 * - bare (or `--scenario all`): every scenario in turn (ALL_SCENARIOS: the single window and the
 *   group scenario on its stack, then batch, redelivery, debounce, durable and flood, each on a
 *   stack of its own, then the cold-start budget of the Lambda bundles with no stack up). A
 *   scenario that fails prints its error; the rest still run, and the last line is one JSON object
 *   with every figure measured and `errors: { scenario: message }` (exit 1 if any).
 * - `--scenario NAME`: that scenario alone; its table, then `{ scenario, <its entries> }`.
 * - window flags (--jobs, --payload-bytes, --kind, --lane, --unique, --fail-once) without
 *   --scenario: the single window alone (scripts/bench-window.ts): N jobs of one app kind enqueued
 *   and run to done, metered; its table, then its JSON line.
 * - `--matrix`: payload sizes × lanes (scripts/bench-matrix.ts); `--scenario heat`: the scale model.
 *
 * With --json only the JSON line is printed. Env (a flag wins): BENCH_JOBS (default 2000),
 * BENCH_WARMUP (default 100), BENCH_TIMEOUT_MS (default 90000), BENCH_LAMBDA_DURATION = "assumed"
 * (default) | "measured": which Lambda duration the headline cost uses, BENCH_GROUPS (default 5),
 * BENCH_GROUP_CHILDREN (default 1000, at most 1000), BENCH_GROUP_CONCURRENCY (groups in flight,
 * default 1), BENCH_BATCH_JOBS (the batch scenario's backlog, default 2000), BENCH_REDELIVERY_JOBS
 * (each redelivery drain's backlog, default 1000), BENCH_DURABLE_JOBS (default 500).
 */

/** Every scenario of `--scenario all`, in ALL_SCENARIOS' order; the group shares the window's stack. */
function allScenarios(args: AllRun): Scenario[] {
  const { jobs, json: _json, mode: _mode, ...shape } = args;
  let windowUsd: number | undefined;
  const [windowName, runWindow] = windowScenario(shape, jobs, "both");
  const byName: Record<Exclude<ScenarioName, "group">, Scenario> = {
    window: [
      windowName,
      async () => {
        const outcome = await runWindow();
        windowUsd = outcome.json.usdPerMillionJobs as number | undefined;
        return outcome;
      },
    ],
    batch: ["batch", () => batchScenario(() => windowUsd)],
    redelivery: ["redelivery", redeliveryScenario],
    debounce: ["debounce", debounceScenario],
    durable: ["durable", durableScenario],
    flood: ["flood", floodScenario],
    "cold-start": ["cold-start", coldStartScenario],
  };
  return ALL_SCENARIOS.filter((name) => name !== "group").map((name) => byName[name]);
}

const fixedScenarios = {
  batch: () => batchScenario(),
  redelivery: redeliveryScenario,
  debounce: debounceScenario,
  durable: durableScenario,
  flood: floodScenario,
  "cold-start": coldStartScenario,
  realtime: realtimeScenario,
  limits: limitsScenario,
  search: searchScenario,
  priorities: priorityScenario,
};

async function report(scenarios: Scenario[], json: boolean, named: string | undefined, all: boolean) {
  const result = await runScenarios(scenarios, {
    tables: !json,
    error: (line) => console.error(line),
    isRefusal: (err) => err instanceof EngineRefusal,
  });
  const errors = all || Object.keys(result.errors).length > 0 ? { errors: result.errors } : {};
  console.log(JSON.stringify({ ...(named ? { scenario: named } : {}), ...result.json, ...errors }));
  process.exitCode = result.exitCode;
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
} else if (args.mode === "heat") {
  const results = await runHeatScenarios({ ...args, timeoutMs: TIMEOUT_MS });
  if (!args.json) printHeatTable(results, args.targetJobsPerSecond);
  console.log(JSON.stringify(heatJson(results, args.targetJobsPerSecond)));
} else if (args.mode === "all") {
  await report(allScenarios(args), args.json, undefined, true);
} else if (args.mode === "single" || args.mode === "group") {
  const { jobs, json, mode, ...shape } = args;
  const scenario = windowScenario(shape, jobs, mode === "group" ? "group" : "window");
  await report([scenario], json, mode === "group" ? "group" : undefined, false);
} else {
  await report([[args.mode, fixedScenarios[args.mode]]], args.json, args.mode, false);
}
