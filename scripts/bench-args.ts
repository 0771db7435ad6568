import { parseArgs } from "node:util";
import { DEFAULT_TARGET_JOBS_PER_SECOND } from "../bench/heat-projection.ts";
import { isLane, LANES, type Lane } from "../bench/lanes.ts";
import { MAX_PAYLOAD_BYTES } from "../lib/job/schemas.ts";
import {
  DEFAULT_HEAT_JOBS,
  DEFAULT_JOBS,
  DEFAULT_KIND,
  DEFAULT_MATRIX_JOBS,
  DEFAULT_MATRIX_KIND,
  DEFAULT_PAYLOAD_BYTES,
  HEAT_GROUP_CHILDREN,
  MIN_PAYLOAD_BYTES,
  SCENARIOS,
} from "./bench-help.ts";

// The defaults and the usage text live in scripts/bench-help.ts; these names are what callers import.
export {
  ALL_SCENARIOS,
  DEFAULT_HEAT_JOBS,
  DEFAULT_JOBS,
  DEFAULT_KIND,
  DEFAULT_MATRIX_JOBS,
  DEFAULT_MATRIX_KIND,
  DEFAULT_PAYLOAD_BYTES,
  HEAT_GROUP_CHILDREN,
  MIN_PAYLOAD_BYTES,
  SCENARIOS,
  type ScenarioName,
  usage,
} from "./bench-help.ts";

/**
 * `npm run bench -- …`'s command line, parsed and checked. Pure: the environment and the app's kind
 * names come in as arguments, so a test can pass its own.
 */

/** What every measured window runs; one shape per single run, or per matrix cell. */
export interface RunShape {
  kind: string;
  lane: Lane;
  payloadBytes: number;
  unique: boolean;
  failOnce: boolean;
}

export interface SingleRun extends RunShape {
  mode: "single";
  jobs: number;
  json: boolean;
}

export interface MatrixRun extends Omit<RunShape, "lane" | "payloadBytes"> {
  mode: "matrix";
  /** Jobs in each cell's measured window. */
  jobs: number;
  lanes: Lane[];
  json: boolean;
}

/** `--scenario heat`: the scale model (scripts/bench-heat.ts, docs/guide/scale.md). */
export interface HeatRun {
  mode: "heat";
  /** Jobs of each job scenario. */
  jobs: number;
  /** Children of the group scenario's one group. */
  groupChildren: number;
  targetJobsPerSecond: number;
  json: boolean;
}

/**
 * `--scenario all`, and `npm run bench` with no flag but --json: every scenario of ALL_SCENARIOS in
 * turn at the defaults; the window's shape and size are here (BENCH_JOBS read).
 */
export interface AllRun extends RunShape {
  mode: "all";
  jobs: number;
  json: boolean;
}

/** `--scenario group`: a plain window of the shape (the figure a child is priced beside), then groups. */
export interface GroupOnlyRun extends RunShape {
  mode: "group";
  jobs: number;
  json: boolean;
}

/** The scenarios of a fixed shape (sizes from their BENCH_* variables): they take no flag but --json. */
export const FIXED_SCENARIOS = [
  "batch",
  "redelivery",
  "debounce",
  "durable",
  "flood",
  "cold-start",
  "realtime",
  "limits",
  "search",
  "priorities",
] as const;
export type FixedScenario = (typeof FIXED_SCENARIOS)[number];
export interface FixedRun {
  mode: FixedScenario;
  json: boolean;
}

export type BenchArgs =
  | AllRun
  | SingleRun
  | GroupOnlyRun
  | MatrixRun
  | HeatRun
  | FixedRun
  | { mode: "help" }
  /** A usage error: exit 2 with the message and the usage text. */
  | { mode: "error"; message: string };

export interface ArgsContext {
  env: Readonly<Record<string, string | undefined>>;
  /** The app's Lambda kinds, which the bench can run, and its pool kinds, which it can't. */
  kinds: readonly string[];
  poolKinds: readonly string[];
}

const options = {
  jobs: { type: "string" },
  "payload-bytes": { type: "string" },
  kind: { type: "string" },
  lane: { type: "string" },
  unique: { type: "boolean" },
  "fail-once": { type: "boolean" },
  json: { type: "boolean" },
  matrix: { type: "boolean" },
  lanes: { type: "string" },
  scenario: { type: "string" },
  "target-rate": { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

class UsageError extends Error {}

/** A whole number in [min, max], written in plain digits. */
function integer(what: string, raw: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const n = /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `≥ ${min}` : `from ${min} to ${max}`;
    throw new UsageError(`${what} must be a whole number ${range}, got "${raw}"`);
  }
  return n;
}

function lane(what: string, raw: string): Lane {
  if (!isLane(raw)) throw new UsageError(`${what} must be one of ${LANES.join(", ")}; got "${raw}"`);
  return raw;
}

function kind(raw: string | undefined, context: ArgsContext, fallback: string): string {
  const name = raw ?? fallback;
  if (context.poolKinds.includes(name))
    throw new UsageError(
      `--kind ${name}: "${name}" is a pool kind, run by the Fargate pool's child programs; the bench measures the Lambda path (kinds: ${context.kinds.join(", ")})`,
    );
  if (!context.kinds.includes(name))
    throw new UsageError(`--kind ${name}: the app has no such kind (kinds: ${context.kinds.join(", ")})`);
  return name;
}

function flags(argv: readonly string[]) {
  try {
    return parseArgs({ args: [...argv], options, strict: true, allowPositionals: false }).values;
  } catch (err) {
    // parseArgs names the flag: "Unknown option '--job'", "Option '--jobs <value>' argument missing".
    throw new UsageError((err as Error).message);
  }
}

type Flags = ReturnType<typeof flags>;

/** Flags that measure something other than the defaults: any of them without --scenario is a single window. */
const isFixed = (scenario: string): scenario is FixedScenario =>
  (FIXED_SCENARIOS as readonly string[]).includes(scenario);

function parse(argv: readonly string[], context: ArgsContext): BenchArgs {
  const values = flags(argv);
  if (values.help) return { mode: "help" };
  const { scenario } = values;
  const asked = (Object.keys(options) as (keyof typeof options)[]).filter(
    (flag) => flag !== "json" && values[flag] !== undefined,
  );
  // Bare, or only --json: what the bench is for, every scenario in turn.
  if (scenario === "all" || asked.length === 0) {
    refuseOthers(values, "all", "runs every scenario at its defaults");
    return { ...windowRun(values, context), mode: "all" };
  }
  if (scenario !== undefined && isFixed(scenario)) {
    refuseOthers(values, scenario, "runs its own fixed shape");
    return { mode: scenario, json: values.json ?? false };
  }
  if (scenario === "heat") return heatRun(values);
  if (scenario !== undefined && scenario !== "window" && scenario !== "group")
    throw new UsageError(`--scenario must be one of ${SCENARIOS.join(", ")}, got "${scenario}"`);
  if (values["target-rate"] !== undefined) throw new UsageError("--target-rate is for --scenario heat");
  if (values.matrix) {
    if (scenario !== undefined)
      throw new UsageError(`--scenario ${scenario} measures no matrix; leave out --matrix`);
    return matrixRun(values, context);
  }
  if (values.lanes !== undefined) throw new UsageError("--lanes is for --matrix; a single run takes --lane");
  return { ...windowRun(values, context), mode: scenario === "group" ? "group" : "single" };
}

/** A scenario that takes no flag but --json names any other it was given. */
function refuseOthers(values: Flags, scenario: string, why: string): void {
  for (const flag of Object.keys(options) as (keyof typeof options)[])
    if (flag !== "scenario" && flag !== "json" && values[flag] !== undefined)
      throw new UsageError(`--scenario ${scenario} ${why}; leave out --${flag}`);
}

function runFlags(values: Flags, context: ArgsContext, fallbackKind: string) {
  return {
    kind: kind(values.kind, context, fallbackKind),
    unique: values.unique ?? false,
    failOnce: values["fail-once"] ?? false,
    json: values.json ?? false,
  };
}

function matrixRun(values: Flags, context: ArgsContext): MatrixRun {
  if (values["payload-bytes"] !== undefined)
    throw new UsageError("--matrix runs its own payload sizes; leave out --payload-bytes");
  if (values.lane !== undefined) throw new UsageError("--matrix takes --lanes a,b,…; leave out --lane");
  const lanes =
    values.lanes === undefined ? [...LANES] : values.lanes.split(",").map((l) => lane("--lanes", l));
  if (new Set(lanes).size !== lanes.length)
    throw new UsageError(`--lanes names a lane twice: ${values.lanes}`);
  const jobs = values.jobs === undefined ? DEFAULT_MATRIX_JOBS : integer("--jobs", values.jobs, 1);
  // The matrix prices skyforge's requests per payload size: its default handler stores no result.
  return { mode: "matrix", jobs, lanes, ...runFlags(values, context, DEFAULT_MATRIX_KIND) };
}

/** One window's shape and size from the flags (defaults where none), BENCH_JOBS the fallback for --jobs. */
function windowRun(values: Flags, context: ArgsContext): Omit<SingleRun, "mode"> {
  const envJobs = context.env.BENCH_JOBS;
  const jobs =
    values.jobs !== undefined
      ? integer("--jobs", values.jobs, 1)
      : envJobs !== undefined && envJobs !== ""
        ? integer("BENCH_JOBS", envJobs, 1)
        : DEFAULT_JOBS;
  const payloadBytes =
    values["payload-bytes"] === undefined
      ? DEFAULT_PAYLOAD_BYTES
      : integer("--payload-bytes", values["payload-bytes"], MIN_PAYLOAD_BYTES, MAX_PAYLOAD_BYTES);
  return {
    jobs,
    payloadBytes,
    lane: values.lane === undefined ? "fenced" : lane("--lane", values.lane),
    ...runFlags(values, context, DEFAULT_KIND),
  };
}

function heatRun(values: Flags): HeatRun {
  for (const flag of ["matrix", "lanes", "lane", "kind", "payload-bytes", "unique", "fail-once"] as const)
    if (values[flag] !== undefined)
      throw new UsageError(`--scenario heat runs its own mix; leave out --${flag}`);
  const raw = values["target-rate"];
  const rate =
    raw === undefined ? DEFAULT_TARGET_JOBS_PER_SECOND : Number(raw.trim() === "" ? Number.NaN : raw);
  if (!Number.isFinite(rate) || rate <= 0)
    throw new UsageError(`--target-rate must be a number of jobs a second above 0, got "${raw}"`);
  return {
    mode: "heat",
    jobs: values.jobs === undefined ? DEFAULT_HEAT_JOBS : integer("--jobs", values.jobs, 10),
    groupChildren: HEAT_GROUP_CHILDREN,
    targetJobsPerSecond: rate,
    json: values.json ?? false,
  };
}

/** The command line as a run to do, help, or a usage error (never throws for bad input). */
export function parseBenchArgs(argv: readonly string[], context: ArgsContext): BenchArgs {
  try {
    return parse(argv, context);
  } catch (err) {
    if (err instanceof UsageError) return { mode: "error", message: err.message };
    throw err;
  }
}
