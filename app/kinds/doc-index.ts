import * as z from "zod";
import { defineKind } from "../define.ts";

/** A document revision, as the doc-* demo kinds take it. */
export const DocRevision = z.object({ doc: z.string().min(1).max(256), rev: z.number().int() });

/**
 * Trailing debounce: a burst of revisions of one doc (enqueues less than 2 s apart) runs once, 2 s
 * after the last of them (10 s after the first at most), with the last payload.
 */
export const docIndex = defineKind({
  name: "doc-index",
  payload: DocRevision,
  queue: "default",
  maxAttempts: 3,
  timeoutSeconds: 30,
  debounce: { key: (p) => p.doc, periodSeconds: 2, maxDelaySeconds: 10, mode: "trailing" },
  handler: async ({ doc, rev }) => ({ doc, rev }),
});
