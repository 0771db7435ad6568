import { defineKind } from "../define.ts";
import { TenantJob, tenantRun } from "./tenant-echo.ts";

/** Flow control per tenant: at most 5 starts a second for each tenant, 5 at once after a quiet spell. */
export const tenantRate = defineKind({
  name: "tenant-rate",
  payload: TenantJob,
  queue: "default",
  maxAttempts: 3,
  timeoutSeconds: 60,
  flow: { key: (job) => job.tenant, rate: { limit: 5, periodSeconds: 1, burst: 5 } },
  handler: (job, ctx) => tenantRun(job, ctx.signal),
});
