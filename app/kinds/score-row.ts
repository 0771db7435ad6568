import { defineKind } from "../define.ts";

/** One row of a fan-out: its score, or an error for a row marked bad (it dies at once, no retry). */
export const scoreRow = defineKind({
  name: "score-row",
  queue: "default",
  maxAttempts: 3,
  timeoutSeconds: 30,
  // Its schema and handler, loaded when a job of the kind first needs them.
  load: () => import("./score-row.job.ts"),
});
