import { app } from "../app/index.ts";
import { PRIORITY_STEP_MS, priorityLevel } from "../lib/job/priority.ts";
import type { JobItem } from "../lib/store/job-item.ts";
import type { ScenarioOutcome } from "./bench-all.ts";
import { BATCH, intEnv, percentile, round } from "./bench-config.ts";
import { jobsWindow, openJobsSide } from "./bench-jobs.ts";

/**
 * The priorities scenario (`npm run bench -- --scenario priorities`; issue 42, "Priorities that
 * age"): PRIORITY_JOBS `tenant-echo` jobs of one tenant (2 runs at once, 50 ms each), enqueued in
 * calls of 100 with priorities 1..5 in turn, so they wait in the key's line as a backlog. Per
 * priority: enqueue→start p50/p95/max; and the jobs started before a lower-priority job though
 * enqueued after its bound (t + (q - p) x PRIORITY_STEP_MS), which must be none. Writes and sends
 * per job are the flood's (a priority changes no request: it is in the parked sort key's digits).
 */

/** BENCH_PRIORITY_JOBS: the backlog, whole calls of 100. */
export const PRIORITY_JOBS =
  Math.max(1, Math.round(intEnv("BENCH_PRIORITY_JOBS", 1000, 100) / BATCH)) * BATCH;
const TENANT = "tenant-priorities";
const SLEEP_MS = 50;
const TIMEOUT_MS = intEnv("BENCH_PRIORITY_TIMEOUT_MS", 600_000, 1000);

const job = (i: number, sleepMs = SLEEP_MS, tenant = TENANT) => ({
  kind: "tenant-echo",
  payload: { tenant, sleepMs, seq: i },
  priority: 1 + (i % 5),
});

/** Each priority's enqueue→start, and the starts the bound forbids (none if it holds). */
export function analysePriorities(items: readonly JobItem[]) {
  const waits = new Map<number, number[]>();
  for (const item of items) {
    const level = priorityLevel(item.priority);
    const list = waits.get(level) ?? [];
    list.push((item.startedAt ?? item.createdAt) - item.createdAt);
    waits.set(level, list);
  }
  const byPriority = [...waits.entries()]
    .sort(([a], [b]) => b - a)
    .map(([priority, list]) => {
      const sorted = [...list].sort((x, y) => x - y);
      return {
        priority,
        jobs: sorted.length,
        p50Ms: percentile(sorted, 50),
        p95Ms: percentile(sorted, 95),
        maxMs: sorted.at(-1) ?? 0,
      };
    });
  // A job k of higher priority q that started before j (priority p) though enqueued after
  // j.createdAt + (q - p) x step: the bound broken.
  let beyondBound = 0;
  for (const j of items)
    for (const k of items) {
      const gap = priorityLevel(k.priority) - priorityLevel(j.priority);
      if (
        gap > 0 &&
        k.createdAt > j.createdAt + gap * PRIORITY_STEP_MS &&
        (k.startedAt ?? 0) < (j.startedAt ?? 0)
      )
        beyondBound += 1;
    }
  return { byPriority, beyondBound };
}

export async function priorityScenario(): Promise<ScenarioOutcome> {
  const side = await openJobsSide("priorities", app);
  try {
    // Warm-up, unreported: parking and hand-over's first requests, on another tenant.
    await jobsWindow(side, BATCH, (i) => job(i, 0, "warm-priorities"), TIMEOUT_MS);
    const startedAt = Date.now();
    const window = await jobsWindow(side, PRIORITY_JOBS, (i) => job(i), TIMEOUT_MS);
    const drainMs = Date.now() - startedAt;
    const { byPriority, beyondBound } = analysePriorities(window.items);
    const json = {
      priorityJobs: PRIORITY_JOBS,
      priorityStepMs: PRIORITY_STEP_MS,
      priorityDrainMs: drainMs,
      priorityWaits: byPriority.map((p) => ({ ...p, p50Ms: round(p.p50Ms, 0), p95Ms: round(p.p95Ms, 0) })),
      priorityStartsBeyondBound: beyondBound,
    };
    return {
      json,
      print: () => {
        console.log(
          `priorities: ${PRIORITY_JOBS} tenant-echo jobs of one tenant (2 at once, ${SLEEP_MS} ms), priorities 1..5 in turn; drained in ${(drainMs / 1000).toFixed(1)} s`,
        );
        for (const p of byPriority)
          console.log(
            `  priority ${p.priority}: ${p.jobs} jobs, enqueue→start p50 ${(p.p50Ms / 1000).toFixed(2)} s  p95 ${(p.p95Ms / 1000).toFixed(2)} s  max ${(p.maxMs / 1000).toFixed(2)} s`,
          );
        console.log(
          `  starts beyond the bound (step ${PRIORITY_STEP_MS / 1000} s): ${beyondBound} (must be 0)`,
        );
      },
      ...(beyondBound > 0
        ? { failures: { priorities: `${beyondBound} starts beyond the priority bound` } }
        : {}),
    };
  } finally {
    await side.stop();
  }
}
