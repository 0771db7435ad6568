import { defineKind } from "../define.ts";

/**
 * Stands for a call to a partner API that allows a few requests per second across the whole
 * cluster: each run takes a token from the `partner-api` bucket, and when none is left it reports
 * Throttled, which cools the queue down without spending the attempt.
 */
export const partnerCall = defineKind({
  name: "partner-call",
  queue: "default",
  maxAttempts: 5,
  timeoutSeconds: 30,
  // Its schema and handler, loaded when a job of the kind first needs them.
  load: () => import("./partner-call.job.ts"),
});
