import { defineKind } from "../define.ts";

/** Fails its first `failTimes` attempts, then succeeds on the next (`ctx.attempt` counts from 1). */
export const flaky = defineKind({
  name: "flaky",
  queue: "default",
  maxAttempts: 5,
  timeoutSeconds: 30,
  // Its schema and handler, loaded when a job of the kind first needs them.
  load: () => import("./flaky.job.ts"),
});
