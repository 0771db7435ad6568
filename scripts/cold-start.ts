import { spawnSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { build } from "esbuild";
import { app } from "../app/index.ts";
import { tierOf } from "../lib/declarations/queue-declaration.ts";
import {
  BUNDLE_BUDGET_BYTES,
  buildBundles,
  buildSettings,
  defaultRoot,
  deployedSdkOption,
  type SdkOption,
} from "./bundle-sizes.ts";
import { type Declared, demoWorkerProbe, generatedWorkers, KIND_COUNTS } from "./cold-start-kinds.ts";
import { buildPeer } from "./cold-start-peer.ts";
import { sstNodeBuildOptions, writeRepoEntries } from "./deploy/lambda-build.ts";

/**
 * The import budget (docs/architecture.md §13): a function's cold import takes at most this many
 * times an import of the AWS SDK clients it uses alone, so skyforge's own part is ≤ 10% on top.
 */
export const IMPORT_BUDGET_RATIO = 1.1;
export const COLD_START_RUNS = 7;
/** The fewest starts a median is reported from on the command line. */
const MIN_REPORTED_RUNS = 5;

export interface FunctionBudget {
  name: string;
  sdk: SdkOption;
  bytes: number;
  /** The AWS SDK packages the bundle imports at init (its static imports of @aws-sdk/*). */
  sdkPackages: string[];
  /** Median wall time of a fresh `node <bundle>.mjs` that loads the bundle (module init included) and exits. */
  importMs: number;
  /** The same for a file that imports only sdkPackages and builds the clients as the function does at init. */
  sdkOnlyMs: number;
  /** importMs / sdkOnlyMs. */
  ratio: number;
  /** importMs over the bare start's median. */
  bareRatio: number;
  /**
   * The same starts' CPU time (user + system, every thread; the process's own report at exit):
   * steadier than wall time on a machine others load, as it leaves out the time spent waiting.
   */
  importCpuMs: number;
  sdkOnlyCpuMs: number;
  cpuRatio: number;
  sizeOk: boolean;
  importOk: boolean;
}

export interface BudgetReport {
  node: string;
  runs: number;
  /** Median wall time of a fresh `node empty.mjs`, and its CPU time. */
  bareNodeMs: number;
  bareCpuMs: number;
  functions: FunctionBudget[];
  /**
   * AWS's own durable functions SDK, a minimal handler built the same way (scripts/cold-start-peer.ts):
   * its import, and the Lambda client it loads on first use (timed inside the process, after the import).
   */
  peer: { importMs: number; importCpuMs: number; firstUseMs: number };
  /** The deployed worker's cold path: its import, then what the first job of `kind` loads (timed inside the process). */
  workerColdPath: { kind: string; importMs: number; firstJobMs: number };
  /** The workers of generated apps (scripts/cold-start-kinds.ts): import, and what their first job loads. */
  kinds: { declared: Declared; count: number; importMs: number; importCpuMs: number; firstJobMs: number }[];
}

/** The kind whose first job the worker's cold path counts (issue 44: an echo job). */
export const COLD_PATH_KIND = "echo";

/**
 * What a function does at init with each SDK package it imports (functions/engine-config.ts,
 * functions/lambda-event-sources.ts, lib/store/context.ts): the SDK-only file does the same, so the
 * ratio charges skyforge only for its own code. Ordered: the document client wraps the DynamoDB one.
 */
const SDK_INIT: Record<string, string> = {
  "@aws-sdk/client-dynamodb":
    'import { DynamoDBClient } from "@aws-sdk/client-dynamodb";\nconst dynamodb = new DynamoDBClient({});',
  "@aws-sdk/lib-dynamodb":
    'import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";\nDynamoDBDocumentClient.from(dynamodb, { marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false } });',
  "@aws-sdk/util-dynamodb": 'import "@aws-sdk/util-dynamodb";',
  "@aws-sdk/client-sqs": 'import { SQSClient } from "@aws-sdk/client-sqs";\nnew SQSClient({});',
  "@aws-sdk/client-s3":
    'import { S3Client } from "@aws-sdk/client-s3";\nnew S3Client({ forcePathStyle: false });',
  "@aws-sdk/client-lambda": 'import { LambdaClient } from "@aws-sdk/client-lambda";\nnew LambdaClient({});',
};

/** The SDK-only entry for a function's SDK packages; a package the table doesn't know is an error, not a guess. */
export function sdkOnlySource(packages: readonly string[]): string {
  const unknown = packages.filter((p) => !(p in SDK_INIT));
  if (unknown.length > 0)
    throw new Error(`cold start: say in SDK_INIT what init does with ${unknown.join(", ")}`);
  if (packages.includes("@aws-sdk/lib-dynamodb") && !packages.includes("@aws-sdk/client-dynamodb")) {
    throw new Error("cold start: @aws-sdk/lib-dynamodb without @aws-sdk/client-dynamodb");
  }
  return Object.keys(SDK_INIT)
    .filter((p) => packages.includes(p))
    .map((p) => SDK_INIT[p])
    .join("\n");
}

/**
 * Every variable a function reads at init (functions/engine-config.ts, functions/handlers.ts), shaped as infra
 * sets them, with dummy values: module init builds clients but calls nothing. No credentials.
 */
export function functionEnv(): Record<string, string> {
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
    // Realtime's settings as a stage has them (infra/realtime.ts): the publishers' and the token
    // minters'. Nothing is read at init: the secret on the first token, the publisher on the first publish.
    SKYFORGE_REALTIME_PREFIX: "skyforge/bench/cold/Jobs",
    SKYFORGE_REALTIME_ENDPOINT: "a1b2c3d4e5f6g7-ats.iot.us-east-1.amazonaws.com",
    SKYFORGE_REALTIME_AUTHORIZER: "skyforge-bench-cold-Jobs",
    SKYFORGE_REALTIME_HMAC_PARAMETER: "/skyforge/bench/cold/Jobs/realtime-hmac",
  };
}

/** A file the run starts: timed from spawn to exit, or (a probe) by the figure it prints. */
interface Subject {
  file: string;
  probe?: true;
}

/**
 * Loaded before each file (`--import`): at exit, the process's CPU time (user + system, every
 * thread) on stderr. The same few lines in every process, the empty one and the SDK-only ones too.
 */
const CPU_AT_EXIT = `data:text/javascript,${encodeURIComponent(
  'process.on("exit", () => { const u = process.cpuUsage(); process.stderr.write("\\ncpu-ms " + (u.user + u.system) / 1000 + "\\n"); });',
)}`;

/**
 * One fresh process, timed from spawn to exit, with the CPU time it reports; a probe's own figure
 * instead, the number it prints (what it timed inside the process). A file that fails fails the
 * measurement.
 */
function timeStart(node: string, subject: Subject, env: NodeJS.ProcessEnv): { ms: number; cpuMs: number } {
  const start = performance.now();
  const run = spawnSync(node, ["--import", CPU_AT_EXIT, subject.file], {
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const ms = performance.now() - start;
  const stderr = run.stderr?.toString() ?? "";
  if (run.status !== 0)
    throw new Error(`${subject.file} exited with ${run.status ?? run.signal}: ${stderr.trim()}`);
  const cpuMs = Number(/^cpu-ms (\S+)$/m.exec(stderr)?.[1]);
  if (!subject.probe) return { ms, cpuMs };
  const printed = Number(run.stdout.toString().trim().split("\n").pop());
  if (!Number.isFinite(printed))
    throw new Error(`${subject.file} printed no figure: ${run.stdout.toString()}`);
  return { ms: printed, cpuMs: printed };
}

/** The median of fresh processes' timings (the cold-start tools report medians). */
export const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

/** A module's, a package's or a folder's share of a start: the median over the runs of its ms in each. */
export interface NamedMedian {
  name: string;
  ms: number;
}

/** Per name, the median over the runs of its ms in each (0 where a run has none), most first. */
export function mediansByName(perRun: readonly Map<string, number>[]): NamedMedian[] {
  const names = new Set(perRun.flatMap((m) => [...m.keys()]));
  return [...names]
    .map((name) => ({ name, ms: median(perRun.map((m) => m.get(name) ?? 0)) }))
    .sort((a, b) => b.ms - a.ms);
}

/**
 * Median start times of the files, and of a bare Node start (an empty .mjs), interleaved: each
 * round starts every file once, in an order rotated round by round, so drift in the machine's load
 * touches all alike. A first, unmeasured round fills the file cache: "cold" means a fresh process.
 */
function medianStarts(
  files: Subject[],
  emptyFile: string,
  runs: number,
  node: string,
): { bareNodeMs: number; ms: number[]; bareCpuMs: number; cpuMs: number[] } {
  // NODE_OPTIONS is left out, so the tsx loader this script runs under is not loaded in the children.
  const env = { PATH: process.env.PATH ?? "", ...functionEnv() };
  const subjects: Subject[] = [{ file: emptyFile }, ...files];
  const times: number[][] = subjects.map(() => []);
  const cpu: number[][] = subjects.map(() => []);
  for (let round = -1; round < runs; round++) {
    for (let k = 0; k < subjects.length; k++) {
      const i = (k + Math.max(round, 0)) % subjects.length;
      const { ms, cpuMs } = timeStart(node, subjects[i] as Subject, env);
      if (round >= 0) {
        times[i]?.push(ms);
        cpu[i]?.push(cpuMs);
      }
    }
  }
  const [bare, ...rest] = times.map(median);
  const [bareCpu, ...restCpu] = cpu.map(median);
  return { bareNodeMs: bare as number, ms: rest, bareCpuMs: bareCpu as number, cpuMs: restCpu };
}

/**
 * Builds the SDK-only file for a set of SDK packages with the same settings as the bundles, next
 * to them; functions that load the same packages share one file, timed once a round (more starts
 * of it per run, and no spread between copies of the same file read as a difference).
 */
async function buildSdkOnly(
  packages: string[],
  sdk: SdkOption,
  dir: string,
  root: string,
  built: Map<string, string>,
) {
  const source = sdkOnlySource(packages);
  const known = built.get(`${sdk}\n${source}`);
  if (known) return known;
  const name = `sdk-only-${built.size}`;
  const entry = join(dir, `${name}.mjs`);
  writeFileSync(entry, source);
  const outfile = join(dir, "functions", `${name}.mjs`);
  await build({ absWorkingDir: root, ...sstNodeBuildOptions(entry, outfile, buildSettings(sdk)) });
  built.set(`${sdk}\n${source}`, outfile);
  return outfile;
}

/**
 * The cold-start budget (docs/architecture.md §13) for every Lambda function, one report for all the
 * SDK options asked, measured together, interleaved: bundle bytes against 400 KiB, and the median
 * cold import against 1.1 × the median import of the AWS SDK clients that function loads at init
 * alone (same packages, same clients built, same build settings), on this machine's Node (the
 * project's Node 24 under the npm scripts). A bare Node start is timed alongside for scale.
 */
export async function measureBudgets(
  sdkOptions: SdkOption[] = [deployedSdkOption],
  { runs = COLD_START_RUNS, node = process.execPath, root = defaultRoot } = {},
): Promise<BudgetReport> {
  // One run checks what the report holds (the bench's JSON test); a figure worth reading is a median of
  // MIN_REPORTED_RUNS or more, which the command line asks for.
  if (!Number.isInteger(runs) || runs < 1) throw new Error(`runs must be a whole number ≥ 1, got ${runs}`);
  // Inside the project, so the external SDK resolves from node_modules; one folder per process.
  const outDir = join(root, "node_modules", ".cache", `skyforge-cold-start-${process.pid}`);
  mkdirSync(outDir, { recursive: true });
  try {
    // Which SDK packages a function loads at init, read where the SDK is left external (with the SDK
    // bundled, the same packages are inlined and the same list holds).
    const external = await buildBundles("external", "", { root, write: false });
    const sdkPackagesOf = new Map(
      external.map((b) => [b.name, b.initExternals.filter((p) => p.startsWith("@aws-sdk/")).sort()]),
    );
    const bundles = [];
    const sdkOnlyFiles = new Map<string, string>();
    for (const sdk of sdkOptions) {
      const dir = join(outDir, sdk);
      for (const b of await buildBundles(sdk, dir, { root })) {
        const sdkPackages = sdkPackagesOf.get(b.name) ?? [];
        const sdkOnlyFile = await buildSdkOnly(sdkPackages, sdk, dir, root, sdkOnlyFiles);
        bundles.push({ ...b, sdk, sdkPackages, sdkOnlyFile });
      }
    }
    const emptyFile = join(outDir, "empty.mjs");
    writeFileSync(emptyFile, "");
    const baselines = [...sdkOnlyFiles.values()];
    // The peer and the generated apps, built with the first SDK option asked (the deployed one by default).
    const sdk = sdkOptions[0] ?? deployedSdkOption;
    const extraDir = join(outDir, "extra");
    const peer = await buildPeer(root, extraDir, sdk);
    const workerEntry = join(root, writeRepoEntries(root).worker.replace(/\.handler$/, ".ts"));
    const demoProbe = await demoWorkerProbe(root, extraDir, sdk, workerEntry, COLD_PATH_KIND);
    const generated = await generatedWorkers(root, extraDir, sdk);
    const extras: Subject[] = [
      { file: peer.file },
      { file: peer.probe, probe: true },
      { file: demoProbe, probe: true },
      ...generated.flatMap((g): Subject[] => [{ file: g.file }, { file: g.probe, probe: true }]),
    ];
    const { bareNodeMs, ms, bareCpuMs, cpuMs } = medianStarts(
      [...bundles.map((b) => ({ file: b.file })), ...baselines.map((file) => ({ file })), ...extras],
      emptyFile,
      runs,
      node,
    );
    const extraMs = ms.slice(bundles.length + baselines.length);
    const at = (i: number) => extraMs[i] as number;
    const cpuAt = (i: number) => cpuMs[bundles.length + baselines.length + i] as number;
    const worker = bundles.findIndex((b) => b.name === "worker" && b.sdk === sdk);
    const nodeVersion = spawnSync(node, ["--version"], { encoding: "utf8" }).stdout.trim();
    return {
      node: nodeVersion,
      runs,
      bareNodeMs,
      bareCpuMs,
      functions: bundles.map((b, i) => {
        const baseline = bundles.length + baselines.indexOf(b.sdkOnlyFile);
        const importMs = ms[i] as number;
        const sdkOnlyMs = ms[baseline] as number;
        const ratio = importMs / sdkOnlyMs;
        const importCpuMs = cpuMs[i] as number;
        const sdkOnlyCpuMs = cpuMs[baseline] as number;
        return {
          name: b.name,
          sdk: b.sdk,
          bytes: b.bytes,
          sdkPackages: b.sdkPackages,
          importMs,
          sdkOnlyMs,
          ratio,
          bareRatio: importMs / bareNodeMs,
          importCpuMs,
          sdkOnlyCpuMs,
          cpuRatio: importCpuMs / sdkOnlyCpuMs,
          sizeOk: b.bytes <= BUNDLE_BUDGET_BYTES,
          importOk: ratio <= IMPORT_BUDGET_RATIO,
        };
      }),
      peer: { importMs: at(0), importCpuMs: cpuAt(0), firstUseMs: at(1) },
      workerColdPath: { kind: COLD_PATH_KIND, importMs: ms[worker] as number, firstJobMs: at(2) },
      kinds: generated.map((g, i) => ({
        declared: g.declared,
        count: g.count,
        importMs: at(3 + 2 * i),
        importCpuMs: cpuAt(3 + 2 * i),
        firstJobMs: at(4 + 2 * i),
      })),
    };
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
}

const budgetKiB = BUNDLE_BUDGET_BYTES / 1024;

export const budgetTitle = `cold start budget: every Lambda bundle ≤ ${budgetKiB} KiB, cold import ≤ ${IMPORT_BUDGET_RATIO} × an import of the SDK clients it uses alone`;

/** "@aws-sdk/client-dynamodb" → "dynamodb", "@aws-sdk/lib-dynamodb" → "lib-dynamodb". */
const sdkShortName = (p: string) => p.replace("@aws-sdk/", "").replace(/^client-/, "");

/** The report as table lines (no indentation). */
export function budgetLines(report: BudgetReport): string[] {
  const verdict = (ok: boolean) => (ok ? "yes" : "NO");
  const header = [
    "function",
    "AWS SDK",
    "bundle KiB",
    `≤ ${budgetKiB} KiB`,
    "import ms",
    "SDK alone ms",
    "× SDK",
    `≤ ${IMPORT_BUDGET_RATIO}×`,
    "× bare",
    "CPU ms",
    "SDK CPU ms",
    "CPU × SDK",
    "SDK packages at init",
  ];
  const rows = report.functions.map((f) => [
    f.name,
    f.sdk,
    (f.bytes / 1024).toFixed(1),
    verdict(f.sizeOk),
    f.importMs.toFixed(1),
    f.sdkOnlyMs.toFixed(1),
    f.ratio.toFixed(2),
    verdict(f.importOk),
    f.bareRatio.toFixed(2),
    f.importCpuMs.toFixed(1),
    f.sdkOnlyCpuMs.toFixed(1),
    f.cpuRatio.toFixed(2),
    f.sdkPackages.map(sdkShortName).join(" "),
  ]);
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => (r[c] as string).length)));
  const left = (c: number) => c < 2 || c === header.length - 1;
  const line = (cells: string[]) =>
    cells
      .map((cell, c) => (left(c) ? cell.padEnd(widths[c] ?? 0) : cell.padStart(widths[c] ?? 0)))
      .join("  ")
      .trimEnd();
  return [
    `bare node start (empty .mjs): ${report.bareNodeMs.toFixed(1)} ms (CPU ${report.bareCpuMs.toFixed(1)} ms); medians of ${report.runs} fresh processes each, interleaved, ${report.node}`,
    line(header),
    ...rows.map(line),
    "bundle: SST's esbuild settings (minified ESM); import: spawn to exit of `node <bundle>.mjs`, module init included;",
    "SDK alone: the SDK packages the bundle imports at init, each client built as the function builds it, same build settings;",
    "CPU: the same starts' user + system time, as each process reports it at exit",
    ...coldPathLines(report),
  ];
}

const ms1 = (ms: number) => Math.round(ms * 10) / 10;

/**
 * The JSON of the cold paths (issue 44), in the same run as `coldStart`: `peer` (AWS's durable
 * functions SDK: import, first-use Lambda client load, their sum), `workerColdPath` (the worker's
 * import and what its first echo job loads) and `kinds` (the worker of a generated app of 2 and of 50
 * kinds, each way of declaring them).
 */
export function coldPathJson(report: BudgetReport) {
  const { peer, workerColdPath: w } = report;
  const peerPathMs = peer.importMs + peer.firstUseMs;
  const workerPathMs = w.importMs + w.firstJobMs;
  return {
    // The same starts' CPU time (user + system), steadier than wall time on a loaded machine.
    coldStartCpu: report.functions.map((f) => ({
      function: f.name,
      importCpuMs: ms1(f.importCpuMs),
      sdkOnlyCpuMs: ms1(f.sdkOnlyCpuMs),
      ratio: Math.round(f.cpuRatio * 100) / 100,
    })),
    bareNodeCpuMs: ms1(report.bareCpuMs),
    peer: {
      importMs: ms1(peer.importMs),
      firstUseMs: ms1(peer.firstUseMs),
      coldPathMs: ms1(peerPathMs),
      importCpuMs: ms1(peer.importCpuMs),
    },
    workerColdPath: {
      kind: w.kind,
      importMs: ms1(w.importMs),
      firstJobMs: ms1(w.firstJobMs),
      coldPathMs: ms1(workerPathMs),
      withinPeer: workerPathMs <= peerPathMs,
    },
    kinds: report.kinds.map((k) => {
      const few = report.kinds.find((f) => f.declared === k.declared && f.count === Math.min(...KIND_COUNTS));
      return {
        declared: k.declared,
        kinds: k.count,
        importMs: ms1(k.importMs),
        importCpuMs: ms1(k.importCpuMs),
        firstJobMs: ms1(k.firstJobMs),
        // This import over the same way's smallest app's: the goal is ≤ 1.05 for 50 kinds declared lazily.
        ratio: few ? Math.round((k.importMs / few.importMs) * 100) / 100 : 1,
      };
    }),
  };
}

/** The cold paths (the worker's and the peer's) and the generated apps' workers, as lines. */
export function coldPathLines(report: BudgetReport): string[] {
  const { peer, workerColdPath: w } = report;
  const peerPath = peer.importMs + peer.firstUseMs;
  const workerPath = w.importMs + w.firstJobMs;
  const of = (count: number, declared: Declared) =>
    report.kinds.find((k) => k.count === count && k.declared === declared);
  const kindLine = (declared: Declared) => {
    const [few, many] = [of(2, declared), of(50, declared)];
    if (!few || !many) return `${declared}: not measured`;
    const cpu = `CPU ${few.importCpuMs.toFixed(1)} → ${many.importCpuMs.toFixed(1)} ms, ${(many.importCpuMs / few.importCpuMs).toFixed(2)}×`;
    return `declared ${declared === "lazy" ? "to load on first use" : "whole"}: 2 kinds ${few.importMs.toFixed(1)} ms, 50 kinds ${many.importMs.toFixed(1)} ms (${(many.importMs / few.importMs).toFixed(2)}×; ${cpu}), first job's load ${few.firstJobMs.toFixed(1)} ms`;
  };
  return [
    `peer (@aws/durable-execution-sdk-js, one step and one wait): import ${peer.importMs.toFixed(1)} ms + Lambda client on first use ${peer.firstUseMs.toFixed(1)} ms = ${peerPath.toFixed(1)} ms`,
    `worker cold path: import ${w.importMs.toFixed(1)} ms + first ${w.kind} job's load ${w.firstJobMs.toFixed(1)} ms = ${workerPath.toFixed(1)} ms (${(workerPath / peerPath).toFixed(2)}× the peer's)`,
    `generated apps' worker, each kind 15 fields and a handler importing ulid: ${kindLine("lazy")}; ${kindLine("whole")}`,
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
  const runs = Number(values.runs ?? COLD_START_RUNS);
  if (!Number.isInteger(runs) || runs < MIN_REPORTED_RUNS)
    throw new Error(`--runs must be a whole number ≥ ${MIN_REPORTED_RUNS}, got ${values.runs}`);
  const report = await measureBudgets(options, { runs });
  console.log(budgetTitle);
  for (const line of budgetLines(report)) console.log(line);
  console.log(JSON.stringify(report));
}
