import { DEFAULT_TARGET_JOBS_PER_SECOND } from "../bench/heat-projection.ts";
import { LANES } from "../bench/lanes.ts";
import { MAX_PAYLOAD_BYTES } from "../lib/job/schemas.ts";

/** `npm run bench -- --help`: its own file so scripts/bench-args.ts stays the parsing alone. */

export const DEFAULT_JOBS = 2000;
/** Jobs per matrix cell: 20 cells of this many take a few minutes in all. */
export const DEFAULT_MATRIX_JOBS = 300;
export const DEFAULT_PAYLOAD_BYTES = 256;
/** `{"seq":<up to 15 digits>,"pad":""}`: the smallest payload the bench can build at any size. */
export const MIN_PAYLOAD_BYTES = 32;
export const DEFAULT_KIND = "echo";
export const DEFAULT_MATRIX_KIND = "bench-noop";
export const DEFAULT_HEAT_JOBS = 1000;
export const HEAT_GROUP_CHILDREN = 10_000;

/**
 * What `--scenario all` (and a bare `npm run bench`) runs, in this order, each on its own (a failure
 * is printed and recorded, the rest still run). The heat model and the matrix run only when named:
 * they answer other questions (a partition's limits at a target rate, cost by payload size × lane).
 */
export const ALL_SCENARIOS = [
  "window",
  "group",
  "batch",
  "redelivery",
  "debounce",
  "durable",
  "flood",
  "cold-start",
] as const;
export type ScenarioName = (typeof ALL_SCENARIOS)[number];
/** Run only when named: 5 000 subscribers of 100 streaming jobs (docs/architecture.md §25). */
export const SCENARIOS = [
  "all",
  ...ALL_SCENARIOS,
  "heat",
  "realtime",
  "limits",
  "search",
  "priorities",
] as const;

export const usage = `usage: npm run bench                  every scenario in turn (the same as --scenario all)
       npm run bench -- --scenario all [--json]
       npm run bench -- [--jobs N] [--payload-bytes B] [--kind K] [--lane L] [--unique] [--fail-once] [--json]
                      (the single window alone; --scenario window with no flag runs it at the defaults)
       npm run bench -- --scenario group [--jobs N] [--payload-bytes B] [--kind K] [--lane L] [--unique] [--fail-once] [--json]
       npm run bench -- --scenario batch|redelivery|debounce|durable|flood|cold-start|realtime|limits|search|priorities [--json]
       npm run bench -- --scenario heat [--target-rate R] [--jobs N] [--json]
       npm run bench -- --matrix [--lanes L,L,…] [--jobs N] [--kind K] [--unique] [--fail-once] [--json]
                      (the matrix's default kind is ${DEFAULT_MATRIX_KIND}, a handler that returns nothing)

  --scenario all      ${ALL_SCENARIOS.join(", ")}, in that order, each on a stack of its
                      own at the defaults (BENCH_JOBS jobs in the window); a failing scenario prints
                      its error, the rest still run, and the JSON line carries every figure measured
                      and "errors": { scenario: message } (exit 1 if any failed); takes only --json
  --jobs N            jobs in the measured window (default: BENCH_JOBS, else ${DEFAULT_JOBS}; with --matrix
                      ${DEFAULT_MATRIX_JOBS} per cell, BENCH_JOBS not read)
  --payload-bytes B   each job's payload serialized as exactly B bytes of JSON, ${MIN_PAYLOAD_BYTES}…${MAX_PAYLOAD_BYTES}
                      (default ${DEFAULT_PAYLOAD_BYTES}); the kind must accept {"seq":…,"pad":"x…"}
  --kind K            the app's Lambda kind to run (default ${DEFAULT_KIND})
  --lane L            the kind's delivery lane: ${LANES.join(" | ")} (default fenced)
  --unique            each job gets its own uniqueKey
  --fail-once         each job fails its first attempt and succeeds on the second
  --json              print only the JSON line
  --matrix            payload sizes 256 B, 1 KB, 4 KB, 32 KB, 200 KB × lanes, one measured run each;
                      a markdown table and a JSON line
  --lanes L,L,…       the matrix's lanes (default all: ${LANES.join(",")})
  --scenario window   the single window: N jobs enqueued, each run to done, metered
  --scenario group    a plain window of the shape (--jobs N), then groups of children of the same kind
                      and size on the same stack (BENCH_GROUPS, BENCH_GROUP_CHILDREN), priced beside it
  --scenario batch    a batch kind's backlog (BENCH_BATCH_JOBS) drained in calls of up to 100
  --scenario redelivery  a drain run once, with lapsed receives, and twice (BENCH_REDELIVERY_JOBS)
  --scenario debounce 1 000 enqueues of a trailing debounce kind over 50 keys in bursts, beside 1 000
                      plain jobs; runs, writes, reads and SQS requests per enqueue, and $/M enqueues
  --scenario durable  durable steps and sleeps: plain no-op jobs, jobs of 10 steps (~100 B results
                      each) and jobs of one 1 s sleep, BENCH_DURABLE_JOBS (500) each; writes, WCU and
                      SQS requests per step and per sleep, $/M steps and $/M sleeps beside the goal
                      ($1/M steps) and Lambda durable functions' $8/M operations
  --scenario flood    flow control per key (minutes): one tenant's 5 000 tenant-echo jobs (50 ms
                      each), then five others' 50 each; the others' enqueue→start p50/p95, the flood's
                      drain, runs at once per key against its limit (over it fails the scenario), extra
                      requests per waiting job beside a plain job, and $/M jobs
  --scenario cold-start  each Lambda bundle's size and cold import beside the SDK clients' alone
  --scenario realtime 100 llm-echo jobs of 200 words, 50 subscribers each (one drops mid-stream and
                      resumes with from): chunk and status latency p50/p99, chunks lost, IoT Core's
                      price (BENCH_REALTIME_JOBS, _WORDS, _SUBSCRIBERS, _DELAY_MS); run only when named
  --scenario limits   several flow limits on one kind (minutes): 2 000 tenant-report jobs over 20
                      tenants and 100 users (BENCH_LIMITS_JOBS), 3 runs a tenant, 1 a user, 20 000 llm
                      tokens a minute; each limit's peak use, the tokens granted a minute, p50/p95 wait
                      by limit, and $/M jobs beside a plain fenced job; run only when named
  --scenario search   tags and search: 1 000 echo jobs untagged, with 1 tag and with 3 (BENCH_SEARCH_JOBS
                      each); enqueue WCU per job and the extra a tag costs (goal ≤ 0.5 WCU), read units
                      per page of 25 by tag, by tag+kind+status and of the scan; run only when named
  --scenario priorities  priorities that age (a minute or two): 1 000 tenant-echo jobs of one tenant
                      (BENCH_PRIORITY_JOBS), priorities 1..5 in turn, waiting in its line; each
                      priority's enqueue→start p50/p95/max, and the starts the stated bound forbids
                      (fails the scenario if any); run only when named
  --scenario heat     the scale model: DynamoDB units per partition key over plain jobs, a uniqueKey
                      mix, jobs due past SQS's delay, a rate-limited kind, a batch kind with one hot key
                      and a group of ${HEAT_GROUP_CHILDREN} children, flow control: a tenant's flood, tenant-report's
                      three limits, a debounced burst on one key (shares of N), then durable jobs: steps,
                      token waits, event waits and kept events on one event pair, child jobs (--jobs N jobs
                      each, default ${DEFAULT_HEAT_JOBS}); each pattern's hottest key projected to --target-rate and checked against AWS's
                      per-partition limits (docs/guide/scale.md)
  --target-rate R     jobs a second to project to, above 0 (default ${DEFAULT_TARGET_JOBS_PER_SECOND}); the apps
                      are built for that rate (their table layout follows it)
  -h, --help          this text

  Still read from the environment (a flag wins): BENCH_JOBS, BENCH_WARMUP, BENCH_TIMEOUT_MS,
  BENCH_LAMBDA_DURATION, BENCH_GROUPS, BENCH_GROUP_CHILDREN, BENCH_GROUP_CONCURRENCY,
  BENCH_BATCH_JOBS, BENCH_REDELIVERY_JOBS, BENCH_DEBOUNCE_ENQUEUES, BENCH_DURABLE_JOBS.
  Exit codes: 0 done, 1 a run or scenario failed, 2 bad usage.`;
