import { setTimeout as delay } from "node:timers/promises";
import * as z from "zod";
import { defineJob } from "../define.ts";

/** The schema and handler of the kind "doc-sync" (app/kinds/doc-sync.ts). */
export default defineJob({
  payload: z.object({
    doc: z.string().min(1).max(256),
    rev: z.number().int(),
    sleepMs: z.number().int().min(0).max(110_000).optional(),
  }),
  handler: async ({ doc, rev, sleepMs }, ctx) => {
    if (sleepMs) await delay(sleepMs, undefined, { signal: ctx.signal });
    return { doc, rev };
  },
});
