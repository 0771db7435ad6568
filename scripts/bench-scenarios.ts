import { enqueuedKind } from "../bench/bench-app.ts";
import { ClientError } from "../lib/errors.ts";
import type { Scenario, ScenarioOutcome } from "./bench-all.ts";
import type { RunShape } from "./bench-args.ts";
import { batchJson, printBatchTable, runBatchScenario } from "./bench-batch.ts";
import { GROUP_CHILDREN, GROUP_CONCURRENCY, GROUPS, round, TIMEOUT_MS, WARMUP } from "./bench-config.ts";
import { runDebounceScenario } from "./bench-debounce.ts";
import { analyseDebounce, debounceJson, printDebounceTable } from "./bench-debounce-report.ts";
import { runDurableScenario } from "./bench-durable.ts";
import { analyseDurable, durableJson, printDurableTable } from "./bench-durable-report.ts";
import { runFloodScenario } from "./bench-flood.ts";
import { analyseFlood, floodJson, printFloodTable } from "./bench-flood-report.ts";
import { analyseGroups, runGroupScenario } from "./bench-group.ts";
import { groupJson, printGroupTable } from "./bench-group-report.ts";
import { runLimitsScenario } from "./bench-limits.ts";
import { analyseLimits, limitsJson, printLimitsTable } from "./bench-limits-report.ts";
import { printRedeliveryTable, redeliveryJson, runRedeliveryScenario } from "./bench-redelivery.ts";
import { printTable } from "./bench-report.ts";
import { analyseWindow, measureWindow, startBenchStack, windowJson } from "./bench-window.ts";
import { deployedSdkOption } from "./bundle-sizes.ts";
import { budgetLines, budgetTitle, COLD_START_RUNS, coldPathJson, measureBudgets } from "./cold-start.ts";

/**
 * Each of `npm run bench`'s scenarios as a ScenarioOutcome (scripts/bench-all.ts runs them): the
 * measuring code is each scenario's own file; here is what its JSON entry and table are.
 */

/** The window measured; the window's table, its JSON fields at the top of the line. */
type WindowPart = "window" | "group" | "both";

/**
 * The single window of `shape`, then (unless part is "window") the group scenario on the same stack:
 * groups of children of the same kind and size, each child priced beside the window's plain job.
 * `part` says whose figures the outcome carries: a group alone still needs its plain job.
 */
export function windowScenario(shape: RunShape, jobs: number, part: WindowPart): Scenario {
  return [part === "group" ? "group" : "window", () => windowAndGroup(shape, jobs, part)];
}

async function windowAndGroup(shape: RunShape, jobs: number, part: WindowPart): Promise<ScenarioOutcome> {
  const bench = await startBenchStack(shape);
  const { stack, meter, ledger, completionStarts, logCounts } = bench;
  try {
    const single = await measureWindow(bench, jobs);
    const analysis = analyseWindow(single);
    const window: ScenarioOutcome =
      part === "group"
        ? { json: {} }
        : {
            json: windowJson(analysis, shape),
            print: () => printTable(analysis, shape, single.snap, undefined, single.logCounts),
          };
    if (part === "window") return window;
    // The scheduled functions cost per minute, not per job (`npm run bench:ops` prices them), and a
    // group completes without them: a tick (the local cleanup's sweep is a table Scan) stays out of
    // the group window, which is long enough to catch one.
    await stack.ticker.stop();
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
    try {
      // Warmed up on one small group first (the group code's own first requests).
      if (WARMUP > 0) await groupRun(1, Math.min(WARMUP, GROUP_CHILDREN), 1, 2_000_000);
      const groupLogStart = new Map(logCounts);
      const groups = await groupRun(GROUPS, GROUP_CHILDREN, GROUP_CONCURRENCY, 3_000_000);
      const groupLogCounts = new Map(
        [...logCounts]
          .map(([k, v]): [string, number] => [k, v - (groupLogStart.get(k) ?? 0)])
          .filter(([, v]) => v > 0),
      );
      const groupAnalysis = analyseGroups(groups, {
        writesPerJob: analysis.ddbWrite.requests / analysis.n,
        wcuPerJob: analysis.wcu / analysis.n,
      });
      const notes = shape.unique
        ? [
            "--unique: a group's children carry no uniqueKey (the group dedupes them), but the plain job they are compared with does.",
          ]
        : [];
      return {
        json: { ...window.json, group: groupJson(groupAnalysis) },
        print: () => {
          window.print?.();
          printGroupTable(groupAnalysis, groupLogCounts, notes);
        },
      };
    } catch (err) {
      const refusal = groupRefusal(err);
      // A failed group costs the group's figures, not the window's.
      if (refusal === undefined)
        return { ...window, failures: { group: err instanceof Error ? err.message : String(err) } };
      return {
        json: { ...window.json, group: { refused: refusal } },
        print: () => {
          window.print?.();
          console.log(`\nskyforge bench: group scenario: n/a, the engine refuses it: ${refusal}`);
        },
      };
    }
  } finally {
    await stack.stop();
  }
}

/** engine.groups.create refuses children of a lane that keeps no record of a success: one line per issue. */
function groupRefusal(err: unknown): string | undefined {
  if (!(err instanceof ClientError)) return undefined;
  const issues = [...new Set((err.issues ?? []).map((i) => i.message))].join("; ");
  return issues ? `${err.message} (${issues})` : err.message;
}

/** A batch kind's backlog, on a stack of its own (a batch kind's queue gathers 100 records a delivery). */
export async function batchScenario(singleUsd?: () => number | undefined): Promise<ScenarioOutcome> {
  const batch = await runBatchScenario();
  return { json: { batch: batchJson(batch) }, print: () => printBatchTable(batch, singleUsd?.()) };
}

export async function redeliveryScenario(): Promise<ScenarioOutcome> {
  const redelivery = await runRedeliveryScenario();
  return { json: { redelivery: redeliveryJson(redelivery) }, print: () => printRedeliveryTable(redelivery) };
}

export async function debounceScenario(): Promise<ScenarioOutcome> {
  const debounce = analyseDebounce(await runDebounceScenario());
  return { json: { debounce: debounceJson(debounce) }, print: () => printDebounceTable(debounce) };
}

/** A failed window still reports what the others measured (scripts/bench-durable.ts). */
export async function durableScenario(): Promise<ScenarioOutcome> {
  const durable = analyseDurable(await runDurableScenario());
  return {
    json: { durable: durableJson(durable) },
    print: () => printDurableTable(durable),
    ...(durable.error !== undefined ? { failures: { durable: durable.error } } : {}),
  };
}

export async function floodScenario(): Promise<ScenarioOutcome> {
  const flood = analyseFlood(await runFloodScenario());
  // The one figure that is a bug rather than a cost: a key ran more jobs at once than its limit.
  const over = flood.tenants.filter((t) => t.maxAtOnce > t.limit);
  return {
    json: { flood: floodJson(flood) },
    print: () => printFloodTable(flood),
    ...(flood.limitsKept
      ? {}
      : {
          failures: {
            flood: `over their limit: ${over.map((t) => `${t.tenant} ${t.maxAtOnce} > ${t.limit}`).join(", ")}`,
          },
        }),
  };
}

/** A limit over its bound is a bug rather than a cost: it fails the scenario, as the flood's does. */
export async function limitsScenario(): Promise<ScenarioOutcome> {
  const limits = analyseLimits(await runLimitsScenario());
  const { peak, bounds } = limits;
  return {
    json: { limits: limitsJson(limits) },
    print: () => printLimitsTable(limits),
    ...(limits.limitsKept
      ? {}
      : {
          failures: {
            limits: `over a limit: peak ${JSON.stringify(peak)}, bounds ${JSON.stringify(bounds)}`,
          },
        }),
  };
}

/**
 * Run with no stack up, so the emulators don't compete with the process starts for the CPU. `runs`:
 * fresh processes per file (a test asks for few).
 */
export async function coldStartScenario(runs = COLD_START_RUNS): Promise<ScenarioOutcome> {
  const budgets = await measureBudgets([deployedSdkOption], { runs });
  return {
    json: {
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
      ...coldPathJson(budgets),
    },
    print: () => {
      console.log(`\nskyforge bench: ${budgetTitle}`);
      for (const line of budgetLines(budgets)) console.log(`  ${line}`);
    },
  };
}
