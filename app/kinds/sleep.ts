import { setTimeout as delay } from "node:timers/promises";
import * as z from "zod";
import { defineKind } from "../define.ts";

/** Sleeps `ms`, and stops at once when the runtime aborts (cancel, timeout, lost lease). */
export const sleep = defineKind({
  name: "sleep",
  payload: z.object({
    ms: z
      .number()
      .int()
      .min(0)
      .max(15 * 60_000),
  }),
  queue: "default",
  maxAttempts: 3,
  timeoutSeconds: 900,
  handler: async ({ ms }, ctx) => {
    await delay(ms, undefined, { signal: ctx.signal });
    return { sleptMs: ms };
  },
});
