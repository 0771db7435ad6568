import { defineKind } from "../define.ts";

/**
 * Singleton, cancel-running: a new revision of a doc cancels the doc's queued or running sync (its
 * signal aborts) and runs once that one has ended; two syncs of one doc never run at once.
 */
export const docSync = defineKind({
  name: "doc-sync",
  queue: "default",
  maxAttempts: 3,
  timeoutSeconds: 120,
  singleton: { key: (p) => p.doc, mode: "cancel-running" },
  // Its schema and handler, loaded when a job of the kind first needs them.
  load: () => import("./doc-sync.job.ts"),
});
