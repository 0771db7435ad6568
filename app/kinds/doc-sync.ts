import { setTimeout as delay } from "node:timers/promises";
import * as z from "zod";
import { defineKind } from "../define.ts";

/**
 * Singleton, cancel-running: a new revision of a doc cancels the doc's queued or running sync (its
 * signal aborts) and runs once that one has ended; two syncs of one doc never run at once.
 */
export const docSync = defineKind({
  name: "doc-sync",
  payload: z.object({
    doc: z.string().min(1).max(256),
    rev: z.number().int(),
    sleepMs: z.number().int().min(0).max(110_000).optional(),
  }),
  queue: "default",
  maxAttempts: 3,
  timeoutSeconds: 120,
  singleton: { key: (p) => p.doc, mode: "cancel-running" },
  handler: async ({ doc, rev, sleepMs }, ctx) => {
    if (sleepMs) await delay(sleepMs, undefined, { signal: ctx.signal });
    return { doc, rev };
  },
});
