import { parseArgs } from "node:util";
import { DEFAULT_TARGET_JOBS_PER_SECOND } from "../bench/heat-projection.ts";
import { isLane, LANES, type Lane } from "../bench/lanes.ts";
import { MAX_PAYLOAD_BYTES } from "../lib/job/schemas.ts";

/**
 * `npm run bench -- …`'s command line, parsed and checked. Pure: the environment and the app's kind
 * names come in as arguments, so a test can pass its own.
 */

export const DEFAULT_JOBS = 2000;
/** Jobs per matrix cell: 20 cells of this many take a few minutes in all. */
export const DEFAULT_MATRIX_JOBS = 300;
export const DEFAULT_PAYLOAD_BYTES = 256;
/** `{"seq":<up to 15 digits>,"pad":""}`: the smallest payload the bench can build at any size. */
export const MIN_PAYLOAD_BYTES = 32;
export const DEFAULT_KIND = "echo";
export const DEFAULT_MATRIX_KIND = "bench-noop";

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
 * `--scenario debounce`: the debounce scenario alone (scripts/bench-debounce.ts). Its shape is fixed
 * (1 000 enqueues over 50 keys in bursts), so it takes no other flag but --json.
 */
export interface DebounceOnlyRun {
  mode: "debounce";
  json: boolean;
}

/**
 * `--scenario flood`: flow control per key alone (scripts/bench-flood.ts): one tenant's 5 000 jobs,
 * then five others' 50 each. Fixed shape and long (minutes), so never part of a single run.
 */
export interface FloodOnlyRun {
  mode: "flood";
  json: boolean;
}

/**
 * `--scenario durable`: durable steps and sleeps alone (scripts/bench-durable.ts): plain, 10-step
 * and sleeping jobs, BENCH_DURABLE_JOBS (500) each; $/M steps and $/M sleeps.
 */
export interface DurableOnlyRun {
  mode: "durable";
  json: boolean;
}

export const SCENARIOS = ["heat", "debounce", "flood", "durable"] as const;

export const DEFAULT_HEAT_JOBS = 1000;
export const HEAT_GROUP_CHILDREN = 10_000;

export type BenchArgs =
  | SingleRun
  | MatrixRun
  | HeatRun
  | DebounceOnlyRun
  | FloodOnlyRun
  | DurableOnlyRun
  | { mode: "help" }
  /** A usage error: exit 2 with the message and the usage text. */
  | { mode: "error"; message: string };

export interface ArgsContext {
  env: Readonly<Record<string, string | undefined>>;
  /** The app's Lambda kinds, which the bench can run, and its pool kinds, which it can't. */
  kinds: readonly string[];
  poolKinds: readonly string[];
}

export const usage = `usage: npm run bench -- [--jobs N] [--payload-bytes B] [--kind K] [--lane L] [--unique] [--fail-once] [--json]
       npm run bench -- --matrix [--lanes L,L,…] [--jobs N] [--kind K] [--unique] [--fail-once] [--json]
       npm run bench -- --scenario heat [--target-rate R] [--jobs N] [--json]
       npm run bench -- --scenario debounce [--json]
       npm run bench -- --scenario flood [--json]
       npm run bench -- --scenario durable [--json]
                      (the matrix's default kind is ${DEFAULT_MATRIX_KIND}, a handler that returns nothing)

  --jobs N            jobs in the measured window (default: BENCH_JOBS, else ${DEFAULT_JOBS}; with --matrix
                      ${DEFAULT_MATRIX_JOBS} per cell, BENCH_JOBS not read)
  --payload-bytes B   each job's payload serialized as exactly B bytes of JSON, ${MIN_PAYLOAD_BYTES}…${MAX_PAYLOAD_BYTES}
                      (default ${DEFAULT_PAYLOAD_BYTES}); the kind must accept {"seq":…,"pad":"x…"}
  --kind K            the app's Lambda kind to run (default ${DEFAULT_KIND})
  --lane L            the kind's delivery lane: ${LANES.join(" | ")} (default fenced)
  --unique            each job gets its own uniqueKey
  --fail-once         each job fails its first attempt and succeeds on the second
  --json              print only the JSON line
  --matrix            payload sizes 256 B, 1 KB, 4 KB, 32 KB, 200 KB × lanes, one measured run each,
                      without the group scenario and the cold-start budget; a markdown table and a JSON line
  --lanes L,L,…       the matrix's lanes (default all: ${LANES.join(",")})
  --scenario heat     the scale model: DynamoDB units per partition key over plain jobs, a uniqueKey
                      mix, jobs due past SQS's delay, a rate-limited kind, a batch kind with one hot key
                      and a group of ${HEAT_GROUP_CHILDREN} children (--jobs N jobs each, default ${DEFAULT_HEAT_JOBS}); each
                      pattern's hottest key projected to --target-rate and checked against AWS's
                      per-partition limits (docs/guide/scale.md)
  --scenario debounce only the debounce scenario (a single run ends with it too): 1 000 enqueues of a
                      trailing debounce kind over 50 keys in bursts, beside 1 000 plain jobs; runs,
                      writes, reads and SQS requests per enqueue, and $/M enqueues
  --scenario flood    flow control per key, alone (never part of a single run: it takes minutes): one
                      tenant's 5 000 tenant-echo jobs (50 ms each), then five others' 50 each; the
                      others' enqueue→start p50/p95, the flood's drain, runs at once per key against
                      its limit, extra requests per waiting job beside a plain job, and $/M jobs
  --scenario durable  durable steps and sleeps, alone: plain no-op jobs, jobs of 10 steps (~100 B
                      results each) and jobs of one 1 s sleep, BENCH_DURABLE_JOBS (500) each; writes,
                      WCU and SQS requests per step and per sleep, $/M steps and $/M sleeps beside
                      the goal ($1/M steps) and Lambda durable functions' $8/M operations
  --target-rate R     jobs a second to project to, above 0 (default ${DEFAULT_TARGET_JOBS_PER_SECOND}); the apps
                      are built for that rate (their table layout follows it)
  -h, --help          this text

  Still read from the environment (a flag wins): BENCH_JOBS, BENCH_WARMUP, BENCH_TIMEOUT_MS,
  BENCH_LAMBDA_DURATION, BENCH_GROUPS, BENCH_GROUP_CHILDREN, BENCH_GROUP_CONCURRENCY,
  BENCH_DURABLE_JOBS.
  Exit codes: 0 done, 1 the run failed, 2 bad usage.`;

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

function parse(argv: readonly string[], context: ArgsContext): BenchArgs {
  const values = flags(argv);
  if (values.help) return { mode: "help" };
  if (values.scenario === "debounce" || values.scenario === "flood" || values.scenario === "durable")
    return fixedRun(values, values.scenario);
  if (values.scenario !== undefined) return heatRun(values);
  if (values["target-rate"] !== undefined) throw new UsageError("--target-rate is for --scenario heat");
  const shared = {
    // The matrix prices skyforge's requests per payload size: its default handler stores no result.
    kind: kind(values.kind, context, values.matrix ? DEFAULT_MATRIX_KIND : DEFAULT_KIND),
    unique: values.unique ?? false,
    failOnce: values["fail-once"] ?? false,
    json: values.json ?? false,
  };
  if (values.matrix) {
    if (values["payload-bytes"] !== undefined)
      throw new UsageError("--matrix runs its own payload sizes; leave out --payload-bytes");
    if (values.lane !== undefined) throw new UsageError("--matrix takes --lanes a,b,…; leave out --lane");
    const lanes =
      values.lanes === undefined ? [...LANES] : values.lanes.split(",").map((l) => lane("--lanes", l));
    if (new Set(lanes).size !== lanes.length)
      throw new UsageError(`--lanes names a lane twice: ${values.lanes}`);
    const jobs = values.jobs === undefined ? DEFAULT_MATRIX_JOBS : integer("--jobs", values.jobs, 1);
    return { mode: "matrix", jobs, lanes, ...shared };
  }
  if (values.lanes !== undefined) throw new UsageError("--lanes is for --matrix; a single run takes --lane");
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
    mode: "single",
    jobs,
    payloadBytes,
    lane: values.lane === undefined ? "fenced" : lane("--lane", values.lane),
    ...shared,
  };
}

/** A scenario of a fixed shape: it takes no flag but --json. */
function fixedRun(
  values: ReturnType<typeof flags>,
  mode: "debounce" | "flood" | "durable",
): DebounceOnlyRun | FloodOnlyRun | DurableOnlyRun {
  for (const flag of Object.keys(options) as (keyof typeof options)[])
    if (flag !== "scenario" && flag !== "json" && values[flag] !== undefined)
      throw new UsageError(`--scenario ${mode} runs its own fixed shape; leave out --${flag}`);
  return { mode, json: values.json ?? false };
}

function heatRun(values: ReturnType<typeof flags>): HeatRun {
  if (values.scenario !== "heat")
    throw new UsageError(`--scenario must be one of ${SCENARIOS.join(", ")}, got "${values.scenario}"`);
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
