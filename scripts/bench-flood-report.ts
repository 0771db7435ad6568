import { tenantEcho } from "../app/kinds/tenant-echo.ts";
import { concurrencyFor, type FlowSettings } from "../lib/job/flow.ts";
import type { JobItem } from "../lib/store/job-item.ts";
import { percentile, round } from "./bench-config.ts";
import { FLOOD_TENANT, type FloodRun } from "./bench-flood.ts";
import { perJob } from "./bench-jobs.ts";

/**
 * The flood scenario's figures (scripts/bench-flood.ts), for the table and the JSON line: how long
 * the other tenants waited to start, A's drain, whether any key ran over its limit, and what the
 * waiting cost in requests beside a plain job of the same run.
 */

/** The goals: the others start within 5 s (p95); a waiting job costs ≤ 1 write + 1 send more. */
export const GOAL_OTHER_P95_MS = 5000;
export const GOAL_EXTRA_WRITES = 1;
export const GOAL_EXTRA_SENDS = 1;

/** One job as its handler's result tells it: when it was enqueued, started and finished (epoch ms). */
interface Run {
  tenant: string;
  createdAt: number;
  start: number;
  finish: number;
}

function runOf(item: JobItem): Run {
  const r = JSON.parse(item.result ?? "null") as { tenant?: string; startedAt?: string; finishedAt?: string };
  if (!r?.tenant || !r.startedAt || !r.finishedAt)
    throw new Error(`flood scenario: job ${item.id} has no tenant-echo result: ${item.result}`);
  return {
    tenant: r.tenant,
    createdAt: item.createdAt,
    start: Date.parse(r.startedAt),
    finish: Date.parse(r.finishedAt),
  };
}

/**
 * The most runs a tenant had going at once: a sweep over its [start, finish] spans, a finish
 * before a start at the same millisecond (a place is handed on only after its run ended).
 */
export function maxAtOnce(runs: readonly Pick<Run, "start" | "finish">[]): number {
  const events = runs.flatMap((r) => [
    [r.start, 1],
    [r.finish, -1],
  ]) as [number, number][];
  events.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  let now = 0;
  let max = 0;
  for (const [, d] of events) {
    now += d;
    max = Math.max(max, now);
  }
  return max;
}

/**
 * From a run's end to the next start of its tenant, for each run that started into a place handed
 * on (every run but a tenant's first `limit`): how long a hand-over takes, which paces a key's line.
 */
export function handOverGaps(runs: readonly Pick<Run, "start" | "finish">[], limit: number): number[] {
  const byStart = [...runs].sort((a, b) => a.start - b.start);
  const finishes = runs.map((r) => r.finish).sort((a, b) => a - b);
  return byStart.slice(limit).map((r) => {
    const before = finishes.filter((f) => f <= r.start);
    return r.start - (before.at(-1) ?? r.start);
  });
}

const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);

export function analyseFlood(r: FloodRun) {
  const runs = r.flood.items.map(runOf);
  const limits = (tenant: string) => concurrencyFor(tenantEcho.flow as FlowSettings<never>, tenant);
  const tenants = [...new Set(runs.map((x) => x.tenant))].map((tenant) => {
    const mine = runs.filter((x) => x.tenant === tenant);
    const waits = sorted(mine.map((x) => x.start - x.createdAt));
    const limit = limits(tenant);
    const gaps = sorted(handOverGaps(mine, typeof limit === "number" ? limit : 1));
    return {
      firstStartMs: waits[0] ?? Number.NaN,
      handOverP50Ms: percentile(gaps, 50),
      tenant,
      jobs: mine.length,
      limit: typeof limit === "number" ? limit : Number.NaN,
      maxAtOnce: maxAtOnce(mine),
      p50Ms: percentile(waits, 50),
      p95Ms: percentile(waits, 95),
      lastFinish: Math.max(...mine.map((x) => x.finish)),
    };
  });
  const others = sorted(runs.filter((x) => x.tenant !== FLOOD_TENANT).map((x) => x.start - x.createdAt));
  const a = tenants.find((t) => t.tenant === FLOOD_TENANT);
  if (!a) throw new Error("flood scenario: no job of the flooding tenant came back");
  const flood = perJob(r.flood, r.flood.jobs);
  const plain = perJob(r.plain, r.plain.jobs);
  // Everything the flood cost beyond as many plain jobs, shared over the jobs that waited parked.
  const extra = (k: keyof typeof flood) =>
    r.flood.parked === 0 ? 0 : ((flood[k] - plain[k]) * r.flood.jobs) / r.flood.parked;
  const extraPerWaiting = {
    jobItemWrites: extra("jobItemWrites"),
    keyStateWrites: extra("keyStateWrites"),
    lostConditions: extra("lostConditions"),
    indexWcu: extra("indexWcu"),
    writes: extra("writes"),
    reads: extra("reads"),
    wcu: extra("wcu"),
    sends: extra("sends"),
    receives: extra("receives"),
  };
  const othersP95Ms = percentile(others, 95);
  const otherTenants = tenants.filter((t) => t.tenant !== FLOOD_TENANT);
  return {
    ...r,
    tenants,
    othersP50Ms: percentile(others, 50),
    othersP95Ms,
    othersMaxMs: others.at(-1) ?? Number.NaN,
    /** The latest any other tenant's first job started: what A's backlog alone cost them. */
    othersFirstStartMaxMs: Math.max(...otherTenants.map((t) => t.firstStartMs)),
    /** A hand-over's median, over the other tenants: their lines of 50 move one place per hand-over. */
    othersHandOverP50Ms: percentile(sorted(otherTenants.map((t) => t.handOverP50Ms)), 50),
    drainSeconds: (a.lastFinish - r.flood.firstEnqueueAt) / 1000,
    /** A's floor: its runs back to back at its limit, nothing else taking time. */
    drainFloorSeconds: (r.floodJobs * r.sleepMs) / a.limit / 1000,
    floodPerJob: flood,
    plainPerJob: plain,
    extraPerWaiting,
    limitsKept: tenants.every((t) => t.maxAtOnce <= t.limit),
    goals: {
      othersP95: othersP95Ms <= GOAL_OTHER_P95_MS,
      extraRequests: extraPerWaiting.writes <= GOAL_EXTRA_WRITES && extraPerWaiting.sends <= GOAL_EXTRA_SENDS,
    },
  };
}

export type FloodAnalysis = ReturnType<typeof analyseFlood>;

const r4 = (x: number) => round(x, 4);

export const floodJson = (a: FloodAnalysis) => ({
  floodJobs: a.floodJobs,
  otherTenants: a.tenants.length - 1,
  otherJobsEach: a.otherJobs,
  sleepMs: a.sleepMs,
  otherStartP50Ms: Math.round(a.othersP50Ms),
  otherStartP95Ms: Math.round(a.othersP95Ms),
  otherStartMaxMs: Math.round(a.othersMaxMs),
  otherFirstStartMaxMs: Math.round(a.othersFirstStartMaxMs),
  otherHandOverP50Ms: Math.round(a.othersHandOverP50Ms),
  floodHandOverP50Ms: Math.round(
    a.tenants.find((t) => t.tenant === FLOOD_TENANT)?.handOverP50Ms ?? Number.NaN,
  ),
  floodDrainSeconds: round(a.drainSeconds, 1),
  floodDrainFloorSeconds: round(a.drainFloorSeconds, 1),
  floodEnqueueSeconds: round(a.flood.floodEnqueueMs / 1000, 1),
  parkedJobs: a.flood.parked,
  keyWaits: a.flood.keyWaits,
  maxRunsAtOnce: Object.fromEntries(a.tenants.map((t) => [t.tenant, t.maxAtOnce])),
  limits: Object.fromEntries(a.tenants.map((t) => [t.tenant, t.limit])),
  limitsKept: a.limitsKept,
  extraWritesPerWaitingJob: r4(a.extraPerWaiting.writes),
  extraJobItemWritesPerWaitingJob: r4(a.extraPerWaiting.jobItemWrites),
  extraKeyStateWritesPerWaitingJob: r4(a.extraPerWaiting.keyStateWrites),
  extraLostConditionsPerWaitingJob: r4(a.extraPerWaiting.lostConditions),
  extraIndexWcuPerWaitingJob: r4(a.extraPerWaiting.indexWcu),
  extraReadsPerWaitingJob: r4(a.extraPerWaiting.reads),
  extraWcuPerWaitingJob: r4(a.extraPerWaiting.wcu),
  extraSendsPerWaitingJob: r4(a.extraPerWaiting.sends),
  extraReceivesPerWaitingJob: r4(a.extraPerWaiting.receives),
  writesPerJob: r4(a.floodPerJob.writes),
  plainWritesPerJob: r4(a.plainPerJob.writes),
  sendsPerJob: r4(a.floodPerJob.sends),
  plainSendsPerJob: r4(a.plainPerJob.sends),
  usdPerMillionJobs: r4(a.floodPerJob.usdPerMillion),
  usdPerMillionPlainJobs: r4(a.plainPerJob.usdPerMillion),
  scheduledTicks: a.ticks,
  goalsMet: { otherStartP95: a.goals.othersP95, extraRequests: a.goals.extraRequests, limits: a.limitsKept },
});

export function printFloodTable(a: FloodAnalysis): void {
  const f = r4;
  const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  const yes = (ok: boolean) => (ok ? "met" : "MISSED");
  const { floodPerJob: fl, plainPerJob: p, extraPerWaiting: x } = a;
  const rows: [string, string][] = [
    [
      "shape",
      `${FLOOD_TENANT}: ${a.floodJobs} tenant-echo jobs (sleep ${a.sleepMs} ms) in calls of 100, then ${a.tenants.length - 1} tenants × ${a.otherJobs}`,
    ],
    [
      "others' enqueue→start",
      `p50 ${s(a.othersP50Ms)}  p95 ${s(a.othersP95Ms)}  max ${s(a.othersMaxMs)}  (goal p95 ≤ ${s(GOAL_OTHER_P95_MS)}: ${yes(a.goals.othersP95)})`,
    ],
    [
      "  what paces them",
      `A's backlog: their first jobs started within ${s(a.othersFirstStartMaxMs)}; their own lines: ${a.otherJobs} jobs move one place per hand-over (p50 ${Math.round(a.othersHandOverP50Ms)} ms)`,
    ],
    ...a.tenants.map((t): [string, string] => [
      `  ${t.tenant}`,
      `${t.jobs} jobs, first ${s(t.firstStartMs)}  p50 ${s(t.p50Ms)}  p95 ${s(t.p95Ms)}; hand-over p50 ${Math.round(t.handOverP50Ms)} ms; at most ${t.maxAtOnce} at once (limit ${t.limit})`,
    ]),
    [
      "A's drain",
      `${a.drainSeconds.toFixed(1)} s from its first enqueue to its last finish (floor ${a.drainFloorSeconds.toFixed(1)} s: ${a.floodJobs} × ${a.sleepMs} ms at its limit; its enqueue took ${(a.flood.floodEnqueueMs / 1000).toFixed(1)} s)`,
    ],
    ["keys within their limits", a.limitsKept ? "yes" : "NO: a tenant ran over its limit"],
    [
      "waiting jobs",
      `${a.flood.parked} parked (keyParked) of ${a.flood.jobs}; keyWaits ${a.flood.keyWaits}; scheduled ticks ${a.ticks}`,
    ],
    [
      "per job, all told",
      `writes ${f(fl.writes)} (wcu ${f(fl.wcu)})  reads ${f(fl.reads)}  sends ${f(fl.sends)}  receives ${f(fl.receives)}  sqs billed ${f(fl.sqsBilled)}`,
    ],
    [
      "plain job (bench-noop)",
      `writes ${f(p.writes)} (wcu ${f(p.wcu)})  reads ${f(p.reads)}  sends ${f(p.sends)}  receives ${f(p.receives)}  sqs billed ${f(p.sqsBilled)}`,
    ],
    [
      "extra per waiting job",
      `writes ${f(x.writes)} (wcu ${f(x.wcu)})  reads ${f(x.reads)}  sends ${f(x.sends)}  receives ${f(x.receives)}  (goal ≤ ${GOAL_EXTRA_WRITES} write + ${GOAL_EXTRA_SENDS} send: ${yes(a.goals.extraRequests)})`,
    ],
    [
      "  where the writes go",
      `job item ${f(x.jobItemWrites)}  key state ${f(x.keyStateWrites)}; lost conditions ${f(x.lostConditions)}; status-index wcu (est.) ${f(x.indexWcu)}`,
    ],
    [
      "usdPerMillionJobs",
      `$${fl.usdPerMillion.toFixed(4)}  (plain fenced job: $${p.usdPerMillion.toFixed(4)}/M)`,
    ],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  console.log("\nskyforge bench: flood scenario (flow control per key), local stack");
  for (const [k, v] of rows) console.log(`  ${k.padEnd(width)}  ${v}`);
}
