import { setTimeout as delay } from "node:timers/promises";
import * as z from "zod";
import { defineKind } from "../define.ts";

/** A tenant user's report: the tokens it spends of the shared LLM budget, and how long it runs. */
export const TenantReportJob = z.object({
  tenant: z.string().min(1).max(256),
  user: z.string().min(1).max(256),
  tokens: z.number().int().min(1).max(10_000),
  sleepMs: z.number().int().min(0).max(10_000).optional(),
});

/** Sleeps `sleepMs` (stopping when aborted) and says when, taken inside the handler. */
export async function reportRun(job: z.output<typeof TenantReportJob>, signal: AbortSignal) {
  const startedAt = new Date().toISOString();
  if (job.sleepMs) await delay(job.sleepMs, undefined, { signal });
  const { tenant, user, tokens } = job;
  return { tenant, user, tokens, startedAt, finishedAt: new Date().toISOString() };
}

/**
 * Three flow limits at once (docs/guide/flow-control.md): at most 3 runs of a tenant, 1 of a user,
 * and a shared `llm` budget of 20 000 tokens a minute that each job takes its `tokens` from. A job
 * starts only when all three admit it, and waits in the line of the first that doesn't.
 */
export const tenantReport = defineKind({
  name: "tenant-report",
  payload: TenantReportJob,
  queue: "default",
  maxAttempts: 3,
  timeoutSeconds: 60,
  flow: [
    { name: "tenant", key: (job) => job.tenant, concurrency: 3 },
    { name: "user", key: (job) => job.user, concurrency: 1 },
    { name: "llm", key: () => "llm", rate: { limit: 20_000, periodSeconds: 60, cost: (job) => job.tokens } },
  ],
  handler: (job, ctx) => reportRun(job, ctx.signal),
});
