import { defineKind } from "../define.ts";

/**
 * Imports one CSV row of `name,email,plan`. A row that can't be read won't read better on a retry,
 * and dropping it would lose a customer: once its attempts run out it pauses for a person, who fixes
 * the row and resumes the job with it (POST /jobs/{id}/resume, `npx skyforge jobs resume ID
 * --payload …`) or cancels it (docs/architecture.md §21).
 */
export const importRow = defineKind({
  name: "import-row",
  queue: "default",
  maxAttempts: 2,
  timeoutSeconds: 30,
  onExhausted: "pause",
  // Its schema and handler, loaded when a job of the kind first needs them.
  load: () => import("./import-row.job.ts"),
});
