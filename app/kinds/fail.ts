import { defineKind } from "../define.ts";

/** Always throws, so it ends dead after maxAttempts. */
export const fail = defineKind({
  name: "fail",
  queue: "default",
  maxAttempts: 3,
  timeoutSeconds: 30,
  // Its schema and handler, loaded when a job of the kind first needs them.
  load: () => import("./fail.job.ts"),
});
