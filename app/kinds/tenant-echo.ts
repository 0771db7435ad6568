import { setTimeout as delay } from "node:timers/promises";
import * as z from "zod";
import { defineKind } from "../define.ts";

/** A tenant's job, as the tenant-* demo kinds take it. */
export const TenantJob = z.object({
  tenant: z.string().min(1).max(256),
  sleepMs: z.number().int().min(0).max(10_000).optional(),
  seq: z.number().optional(),
});

/** Sleeps `sleepMs` (stopping when aborted) and says when, taken inside the handler. */
export async function tenantRun(job: z.output<typeof TenantJob>, signal: AbortSignal) {
  const startedAt = new Date().toISOString();
  if (job.sleepMs) await delay(job.sleepMs, undefined, { signal });
  return { tenant: job.tenant, seq: job.seq, startedAt, finishedAt: new Date().toISOString() };
}

/**
 * Flow control per tenant: at most 4 runs at once for a tenant whose id starts with `gold-`, 2 for
 * any other, across every worker; a tenant's flood waits in its own line while others run.
 */
export const tenantEcho = defineKind({
  name: "tenant-echo",
  payload: TenantJob,
  queue: "default",
  maxAttempts: 3,
  timeoutSeconds: 60,
  flow: { key: (job) => job.tenant, concurrency: (tenant) => (tenant.startsWith("gold-") ? 4 : 2) },
  handler: (job, ctx) => tenantRun(job, ctx.signal),
});
