import { defineKind } from "../define.ts";

/**
 * Sleeps `ms`, and stops at once when the runtime aborts (cancel, timeout, lost lease). Its schema
 * and handler are in sleep.job.ts, loaded when a sleep job first runs or is enqueued.
 */
export const sleep = defineKind({
  name: "sleep",
  queue: "default",
  maxAttempts: 3,
  timeoutSeconds: 900,
  load: () => import("./sleep.job.ts"),
});
