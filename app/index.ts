import { defineApp } from "../lib/declarations/define-app.ts";
import { poolKinds } from "./pool-kinds.ts";
import { queues } from "./queues.ts";
import { rateLimits } from "./rate-limits.ts";
import { schedules } from "./schedules.ts";

/** The app's job kinds. Adding one: a file in app/kinds/ and one line here. */
export const kinds = [
  (await import("./kinds/echo.ts")).echo,
  (await import("./kinds/sleep.ts")).sleep,
  (await import("./kinds/fail.ts")).fail,
  (await import("./kinds/flaky.ts")).flaky,
  (await import("./kinds/partner-call.ts")).partnerCall,
  (await import("./kinds/score-row.ts")).scoreRow,
  (await import("./kinds/write-report.ts")).writeReport,
  (await import("./kinds/score-all.ts")).scoreAll,
  (await import("./kinds/batch-echo.ts")).batchEcho,
  (await import("./kinds/doc-index.ts")).docIndex,
  (await import("./kinds/doc-digest.ts")).docDigest,
  (await import("./kinds/doc-sync.ts")).docSync,
  (await import("./kinds/tenant-echo.ts")).tenantEcho,
  (await import("./kinds/tenant-rate.ts")).tenantRate,
  (await import("./kinds/tenant-report.ts")).tenantReport,
  (await import("./kinds/onboard.ts")).onboard,
  (await import("./kinds/order-flow.ts")).orderFlow,
  (await import("./kinds/import-row.ts")).importRow,
  (await import("./kinds/order-saga.ts")).orderSaga,
  (await import("./kinds/llm-echo.ts")).llmEcho,
] as const;

/** Everything skyforge runs, in one value: functions, infra, the local stack and the benches read it. */
export const app = defineApp({ queues, kinds, poolKinds, schedules, rateLimits });
