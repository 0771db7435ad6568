import type { JobItem } from "../lib/store/job-item.ts";
import { percentile, round } from "./bench-config.ts";
import { maxAtOnce } from "./bench-flood-report.ts";
import { perJob } from "./bench-jobs.ts";
import type { LimitsRun } from "./bench-limits.ts";

/**
 * The limits scenario's figures (scripts/bench-limits.ts): each limit's peak use against its bound,
 * the tokens the `llm` rate granted per minute, how long jobs waited and for which limit, and what a
 * job cost beside a plain one.
 */

/** tenant-report's limits (app/kinds/tenant-report.ts). */
const TENANT_LIMIT = 3;
const USER_LIMIT = 1;
const LLM_PER_MINUTE = 20_000;
/** The rate's burst: its limit, as the kind declares none. */
const LLM_BURST = 20_000;
/** The wait attribution's step. */
const STEP_MS = 5;

export interface Run {
  tenant: string;
  user: string;
  tokens: number;
  createdAt: number;
  start: number;
  finish: number;
}

function runOf(item: JobItem): Run {
  const r = JSON.parse(item.result ?? "null") as Partial<
    Record<keyof Run | "startedAt" | "finishedAt", unknown>
  >;
  if (typeof r?.tenant !== "string" || typeof r.startedAt !== "string" || typeof r.finishedAt !== "string")
    throw new Error(`limits scenario: job ${item.id} has no tenant-report result: ${item.result}`);
  return {
    tenant: r.tenant,
    user: String(r.user),
    tokens: Number(r.tokens),
    createdAt: item.createdAt,
    start: Date.parse(r.startedAt),
    finish: Date.parse(r.finishedAt),
  };
}

const groupBy = (runs: readonly Run[], key: (r: Run) => string) => {
  const groups = new Map<string, Run[]>();
  for (const r of runs) groups.set(key(r), [...(groups.get(key(r)) ?? []), r]);
  return groups;
};

/** How many of `runs` were going at `t`. */
const goingAt = (runs: readonly Run[], t: number) => runs.filter((r) => r.start <= t && t < r.finish).length;

/**
 * Which limit a job's wait was spent on, as the gate meets them (tenant, then user, then the rate):
 * each step of its wait goes to its tenant while 3 of the tenant's runs were going, else to its user
 * while the user's run was going, else to `llm` (its turn on the rate, and the hand-overs' latency).
 */
export function waitsByLimit(run: Run, tenantRuns: readonly Run[], userRuns: readonly Run[]) {
  const spent = { tenant: 0, user: 0, llm: 0 };
  for (let t = run.createdAt; t < run.start; t += STEP_MS) {
    const step = Math.min(STEP_MS, run.start - t);
    if (goingAt(tenantRuns, t) >= TENANT_LIMIT) spent.tenant += step;
    else if (goingAt(userRuns, t) >= USER_LIMIT) spent.user += step;
    else spent.llm += step;
  }
  return spent;
}

/** The most tokens started within any 60 s: at most the burst plus a minute of the rate. */
export function mostTokensInAMinute(runs: readonly Run[]): number {
  const byStart = [...runs].sort((a, b) => a.start - b.start);
  let most = 0;
  let sum = 0;
  let from = 0;
  for (const r of byStart) {
    sum += r.tokens;
    while ((byStart[from] as Run).start <= r.start - 60_000) sum -= (byStart[from++] as Run).tokens;
    most = Math.max(most, sum);
  }
  return most;
}

/**
 * The rate's use: the tokens started beyond its burst, a minute, from the first start to the last.
 * A run the rate paces comes to its limit (20 000); less is the rate under-used. NaN when the run
 * never spent the burst.
 */
function tokensPerMinuteBeyondBurst(runs: readonly Run[]): number {
  const tokens = runs.reduce((n, r) => n + r.tokens, 0);
  const starts = runs.map((r) => r.start);
  const minutes = (Math.max(...starts) - Math.min(...starts)) / 60_000;
  return tokens > LLM_BURST && minutes > 0 ? (tokens - LLM_BURST) / minutes : Number.NaN;
}

const quantiles = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { p50Ms: Math.round(percentile(s, 50)), p95Ms: Math.round(percentile(s, 95)) };
};

export function analyseLimits(r: LimitsRun) {
  const runs = r.limits.items.map(runOf);
  const tenants = groupBy(runs, (x) => x.tenant);
  const users = groupBy(runs, (x) => x.user);
  const peakTenant = Math.max(...[...tenants.values()].map(maxAtOnce));
  const peakUser = Math.max(...[...users.values()].map(maxAtOnce));
  const spent = runs.map((x) => waitsByLimit(x, tenants.get(x.tenant) ?? [], users.get(x.user) ?? []));
  const mostInAMinute = mostTokensInAMinute(runs);
  const limits = perJob(r.limits, r.limits.jobs);
  const plain = perJob(r.plain, r.plain.jobs);
  return {
    jobs: r.jobs,
    tenants: tenants.size,
    users: users.size,
    sleepMs: r.sleepMs,
    tokens: runs.reduce((n, x) => n + x.tokens, 0),
    windowSeconds: (Math.max(...runs.map((x) => x.finish)) - r.startedAt) / 1000,
    peak: { tenant: peakTenant, user: peakUser, llmTokensInAMinute: mostInAMinute },
    bounds: { tenant: TENANT_LIMIT, user: USER_LIMIT, llmTokensInAMinute: LLM_BURST + LLM_PER_MINUTE },
    llmTokensPerMinuteBeyondBurst: tokensPerMinuteBeyondBurst(runs),
    wait: quantiles(runs.map((x) => x.start - x.createdAt)),
    waitByLimit: {
      tenant: quantiles(spent.map((s) => s.tenant)),
      user: quantiles(spent.map((s) => s.user)),
      llm: quantiles(spent.map((s) => s.llm)),
    },
    limitsKept:
      peakTenant <= TENANT_LIMIT && peakUser <= USER_LIMIT && mostInAMinute <= LLM_BURST + LLM_PER_MINUTE,
    perJob: limits,
    plainPerJob: plain,
    ticks: r.ticks,
  };
}

export type LimitsAnalysis = ReturnType<typeof analyseLimits>;

const r4 = (x: number) => round(x, 4);

export const limitsJson = (a: LimitsAnalysis) => ({
  jobs: a.jobs,
  tenants: a.tenants,
  users: a.users,
  tokens: a.tokens,
  windowSeconds: round(a.windowSeconds, 1),
  peak: a.peak,
  bounds: a.bounds,
  limitsKept: a.limitsKept,
  llmTokensPerMinuteBeyondBurst: Math.round(a.llmTokensPerMinuteBeyondBurst),
  llmTokensPerMinuteLimit: LLM_PER_MINUTE,
  waitP50Ms: a.wait.p50Ms,
  waitP95Ms: a.wait.p95Ms,
  waitByLimit: a.waitByLimit,
  writesPerJob: r4(a.perJob.writes),
  plainWritesPerJob: r4(a.plainPerJob.writes),
  sendsPerJob: r4(a.perJob.sends),
  plainSendsPerJob: r4(a.plainPerJob.sends),
  usdPerMillionJobs: r4(a.perJob.usdPerMillion),
  usdPerMillionPlainJobs: r4(a.plainPerJob.usdPerMillion),
  scheduledTicks: a.ticks,
});

export function printLimitsTable(a: LimitsAnalysis): void {
  const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  const w = (q: { p50Ms: number; p95Ms: number }) => `p50 ${s(q.p50Ms)}  p95 ${s(q.p95Ms)}`;
  const rows: [string, string][] = [
    [
      "shape",
      `${a.jobs} tenant-report jobs (${a.tenants} tenants, ${a.users} users, ${a.tokens} tokens, sleep ${a.sleepMs} ms) in calls of 100; done in ${a.windowSeconds.toFixed(1)} s`,
    ],
    [
      "peak use",
      `tenant ${a.peak.tenant}/${a.bounds.tenant}  user ${a.peak.user}/${a.bounds.user}  llm ${a.peak.llmTokensInAMinute} tokens in a minute (burst + rate ${a.bounds.llmTokensInAMinute})  ${a.limitsKept ? "kept" : "OVER A LIMIT"}`,
    ],
    [
      "llm granted",
      Number.isNaN(a.llmTokensPerMinuteBeyondBurst)
        ? `n/a: the run never spent the rate's burst (${LLM_BURST} tokens)`
        : `${Math.round(a.llmTokensPerMinuteBeyondBurst)} tokens a minute beyond its burst, first start to last (rate ${LLM_PER_MINUTE})`,
    ],
    ["enqueue→start", w(a.wait)],
    ["  waiting for tenant", w(a.waitByLimit.tenant)],
    ["  waiting for user", w(a.waitByLimit.user)],
    ["  waiting for llm", `${w(a.waitByLimit.llm)}  (its turn, and hand-overs' latency)`],
    [
      "per job",
      `writes ${r4(a.perJob.writes)}  sends ${r4(a.perJob.sends)}  (plain fenced job: writes ${r4(a.plainPerJob.writes)}  sends ${r4(a.plainPerJob.sends)})`,
    ],
    [
      "usdPerMillionJobs",
      `$${a.perJob.usdPerMillion.toFixed(4)}  (plain fenced job: $${a.plainPerJob.usdPerMillion.toFixed(4)}/M)`,
    ],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  console.log("\nskyforge bench: limits scenario (several flow limits on one kind), local stack");
  for (const [k, v] of rows) console.log(`  ${k.padEnd(width)}  ${v}`);
}
