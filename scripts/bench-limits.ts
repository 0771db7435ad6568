import { app } from "../app/index.ts";
import { NOOP_KIND, noopKind } from "../bench/noop-kind.ts";
import { defineApp } from "../lib/declarations/define-app.ts";
import { BATCH, intEnv, payload } from "./bench-config.ts";
import { type JobsSide, jobsWindow, openJobsSide } from "./bench-jobs.ts";

/**
 * The limits scenario (`npm run bench -- --scenario limits`; issue 42): LIMITS_JOBS `tenant-report`
 * jobs over 20 tenants and 100 users (each user of one tenant), under the kind's three limits: 3 runs
 * a tenant, 1 a user, and the shared `llm` rate of 20 000 tokens a minute. Each job takes 1 to 39
 * tokens (20 on average), so the run spends twice the rate's burst and the rate paces its second
 * half. Before it, PLAIN_JOBS no-op jobs (fenced) measured the same way: what a job costs without
 * flow control. Metered as every window of scripts/bench-jobs.ts is.
 */

/** BENCH_LIMITS_JOBS: the report jobs, whole calls of 100. */
export const LIMITS_JOBS = Math.max(1, Math.round(intEnv("BENCH_LIMITS_JOBS", 2000, 100) / BATCH)) * BATCH;
export const TENANTS = 20;
export const USERS = 100;
export const SLEEP_MS = 20;
const PLAIN_JOBS = 500;
/** 2 000 jobs of 20 tokens: a burst of 20 000, then a minute of the rate; twice that as a bound. */
const LIMITS_TIMEOUT_MS = intEnv("BENCH_LIMITS_TIMEOUT_MS", 600_000, 1000);

/** The i-th job: its user (and so its tenant) round robin, its tokens spread over 1..39. */
export function reportJob(i: number, sleepMs = SLEEP_MS) {
  const user = i % USERS;
  return {
    kind: "tenant-report",
    payload: {
      tenant: `tenant-${user % TENANTS}`,
      user: `user-${user}`,
      tokens: 1 + ((i * 7) % 39),
      sleepMs,
    },
  };
}

const plainWindow = (side: JobsSide, jobs: number, seqBase: number) =>
  jobsWindow(side, jobs, (i) => ({ kind: NOOP_KIND, payload: payload(seqBase + i, 256) }), LIMITS_TIMEOUT_MS);

export async function runLimitsScenario() {
  const side = await openJobsSide("limits", defineApp({ ...app, kinds: [...app.kinds, noopKind] }));
  try {
    // Warm-up, unreported: the code paths of parking, hand-over and the rate. Its tokens come out of
    // the llm budget too, so it is small (100 jobs of 1 token).
    await plainWindow(side, BATCH, 8_000_000);
    await jobsWindow(
      side,
      BATCH,
      (i) => ({ ...reportJob(i, 0), payload: { ...reportJob(i, 0).payload, tokens: 1 } }),
      LIMITS_TIMEOUT_MS,
    );
    const plain = await plainWindow(side, PLAIN_JOBS, 9_000_000);
    side.ticks = 0;
    const startedAt = Date.now();
    const limits = await jobsWindow(side, LIMITS_JOBS, (i) => reportJob(i), LIMITS_TIMEOUT_MS);
    return { jobs: LIMITS_JOBS, sleepMs: SLEEP_MS, startedAt, ticks: side.ticks, plain, limits };
  } finally {
    await side.stop();
  }
}

export type LimitsRun = Awaited<ReturnType<typeof runLimitsScenario>>;
