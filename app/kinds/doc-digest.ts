import { defineCollectKind } from "../define.ts";
import { DocRevision } from "./doc-index.ts";

/**
 * Collect debounce: one run gets every revision of a burst of one doc, in enqueue order, and
 * answers each of them with the whole list.
 */
export const docDigest = defineCollectKind({
  name: "doc-digest",
  payload: DocRevision,
  queue: "default",
  maxAttempts: 3,
  timeoutSeconds: 30,
  debounce: { key: (p) => p.doc, periodSeconds: 2, maxDelaySeconds: 10 },
  handler: async (revisions) => {
    const doc = revisions[0]?.doc ?? "";
    const revs = revisions.map((r) => r.rev);
    return revisions.map(() => ({ doc, revs }));
  },
});
