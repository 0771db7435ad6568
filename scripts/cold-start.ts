import { spawnSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { app } from "../app/index.ts";
import { tierOf } from "../lib/declarations/queue-declaration.ts";
import {
  BUNDLE_BUDGET_BYTES,
  buildBundles,
  defaultRoot,
  deployedSdkOption,
  type SdkOption,
} from "./bundle-sizes.ts";

/** The import budget (docs/architecture.md §13): a cold import takes at most this many bare Node starts. */
export const IMPORT_BUDGET_RATIO = 1.5;
export const COLD_START_RUNS = 7;

export interface FunctionBudget {
  name: string;
  sdk: SdkOption;
  bytes: number;
  /** Median wall time of a fresh `node <bundle>.mjs` that loads the bundle (module init included) and exits. */
  importMs: number;
  /** importMs over the bare start's median. */
  ratio: number;
  sizeOk: boolean;
  importOk: boolean;
}

export interface BudgetReport {
  node: string;
  runs: number;
  /** Median wall time of a fresh `node empty.mjs`. */
  bareNodeMs: number;
  functions: FunctionBudget[];
}

/**
 * Every variable a function reads at init (functions/runtime-config.ts, worker.ts), shaped as infra
 * sets them, with dummy values: module init builds clients but calls nothing. No credentials.
 */
function functionEnv(): Record<string, string> {
  const urls = (suffix: string) =>
    JSON.stringify(
      Object.fromEntries(
        app.queues.map((q) => [
          q.name,
          `https://sqs.us-east-1.amazonaws.com/000000000000/sf-${q.name}${suffix}`,
        ]),
      ),
    );
  const lambdaQueues = app.queues.filter((q) => tierOf(q) === "lambda");
  const workerQueue = lambdaQueues[0];
  if (!workerQueue) throw new Error("the app declares no Lambda-tier queue for the worker");
  return {
    AWS_REGION: "us-east-1",
    SKYFORGE_TABLE: "skyforge-jobs",
    SKYFORGE_CLAIMS_BUCKET: "skyforge-claims",
    SKYFORGE_QUEUE_URLS: urls(""),
    SKYFORGE_DLQ_URLS: urls("-dlq"),
    SKYFORGE_EVENT_SOURCE_MAPPINGS: JSON.stringify(
      Object.fromEntries(lambdaQueues.map((q) => [q.name, "00000000-0000-4000-8000-000000000000"])),
    ),
    SKYFORGE_WORKER_QUEUE: workerQueue.name,
  };
}

/** One fresh process, timed from spawn to exit. A bundle that fails at init fails the measurement. */
function timeStart(node: string, file: string, env: NodeJS.ProcessEnv): number {
  const start = performance.now();
  const run = spawnSync(node, [file], { env, stdio: ["ignore", "ignore", "pipe"] });
  const ms = performance.now() - start;
  if (run.status !== 0) {
    throw new Error(`${file} exited with ${run.status ?? run.signal}: ${run.stderr?.toString().trim()}`);
  }
  return ms;
}

const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

/**
 * Median start times of the files, and of a bare Node start (an empty .mjs), interleaved: each
 * round starts every file once, in an order rotated round by round, so drift in the machine's load
 * touches all alike. A first, unmeasured round fills the file cache: "cold" means a fresh process.
 */
function medianStarts(
  files: string[],
  emptyFile: string,
  runs: number,
  node: string,
): { bareNodeMs: number; ms: number[] } {
  // NODE_OPTIONS is left out, so the tsx loader this script runs under is not loaded in the children.
  const env = { PATH: process.env.PATH ?? "", ...functionEnv() };
  const subjects = [emptyFile, ...files];
  const times: number[][] = subjects.map(() => []);
  for (let round = -1; round < runs; round++) {
    for (let k = 0; k < subjects.length; k++) {
      const i = (k + Math.max(round, 0)) % subjects.length;
      const ms = timeStart(node, subjects[i] as string, env);
      if (round >= 0) times[i]?.push(ms);
    }
  }
  const [bare, ...rest] = times.map(median);
  return { bareNodeMs: bare as number, ms: rest };
}

/**
 * The cold-start budget (docs/architecture.md §13) for every Lambda function, one report for all the SDK options asked
 * (measured together, interleaved, against one bare-start median): bundle bytes against 400 KiB,
 * and the median cold import against 1.5 × the median bare Node start, on this machine's Node
 * (the project's Node 24 under the npm scripts).
 */
export async function measureBudgets(
  sdkOptions: SdkOption[] = [deployedSdkOption],
  { runs = COLD_START_RUNS, node = process.execPath, root = defaultRoot } = {},
): Promise<BudgetReport> {
  if (!Number.isInteger(runs) || runs < 5) throw new Error(`runs must be a whole number ≥ 5, got ${runs}`);
  // Inside the project, so the external SDK resolves from node_modules; one folder per process.
  const outDir = join(root, "node_modules", ".cache", `skyforge-cold-start-${process.pid}`);
  mkdirSync(outDir, { recursive: true });
  try {
    const bundles = [];
    for (const sdk of sdkOptions) {
      for (const b of await buildBundles(sdk, join(outDir, sdk), { root })) bundles.push({ ...b, sdk });
    }
    const emptyFile = join(outDir, "empty.mjs");
    writeFileSync(emptyFile, "");
    const { bareNodeMs, ms } = medianStarts(
      bundles.map((b) => b.file),
      emptyFile,
      runs,
      node,
    );
    const nodeVersion = spawnSync(node, ["--version"], { encoding: "utf8" }).stdout.trim();
    return {
      node: nodeVersion,
      runs,
      bareNodeMs,
      functions: bundles.map((b, i) => {
        const importMs = ms[i] as number;
        const ratio = importMs / bareNodeMs;
        return {
          name: b.name,
          sdk: b.sdk,
          bytes: b.bytes,
          importMs,
          ratio,
          sizeOk: b.bytes <= BUNDLE_BUDGET_BYTES,
          importOk: ratio <= IMPORT_BUDGET_RATIO,
        };
      }),
    };
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
}

const budgetKiB = BUNDLE_BUDGET_BYTES / 1024;

export const budgetTitle = `cold start budget: every Lambda bundle ≤ ${budgetKiB} KiB, cold import ≤ ${IMPORT_BUDGET_RATIO} × a bare Node start`;

/** The report as table lines (no indentation). */
export function budgetLines(report: BudgetReport): string[] {
  const verdict = (ok: boolean) => (ok ? "yes" : "NO");
  const header = [
    "function",
    "AWS SDK",
    "bundle KiB",
    `≤ ${budgetKiB} KiB`,
    "import ms",
    "× bare",
    `≤ ${IMPORT_BUDGET_RATIO}×`,
  ];
  const rows = report.functions.map((f) => [
    f.name,
    f.sdk,
    (f.bytes / 1024).toFixed(1),
    verdict(f.sizeOk),
    f.importMs.toFixed(1),
    f.ratio.toFixed(2),
    verdict(f.importOk),
  ]);
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => (r[c] as string).length)));
  const line = (cells: string[]) =>
    cells.map((cell, c) => (c < 2 ? cell.padEnd(widths[c] ?? 0) : cell.padStart(widths[c] ?? 0))).join("  ");
  return [
    `bare node start (empty .mjs): ${report.bareNodeMs.toFixed(1)} ms; medians of ${report.runs} fresh processes each, interleaved, ${report.node}`,
    line(header),
    ...rows.map(line),
    "bundle: SST's esbuild settings (minified ESM); import: spawn to exit of `node <bundle>.mjs`, module init included",
  ];
}

/**
 * `npx tsx scripts/cold-start.ts [--compare-sdk] [--runs N]`: the budget table alone, for the deployed
 * SDK option or (--compare-sdk) for both, measured in one interleaved run; then the report as JSON.
 */
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values } = parseArgs({
    options: { "compare-sdk": { type: "boolean", default: false }, runs: { type: "string" } },
  });
  const options: SdkOption[] = values["compare-sdk"] ? ["external", "bundled"] : [deployedSdkOption];
  const report = await measureBudgets(options, { runs: Number(values.runs ?? COLD_START_RUNS) });
  console.log(budgetTitle);
  for (const line of budgetLines(report)) console.log(line);
  console.log(JSON.stringify(report));
}
