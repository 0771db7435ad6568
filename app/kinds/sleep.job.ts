import { setTimeout as delay } from "node:timers/promises";
import * as z from "zod";
import { defineJob } from "../define.ts";

/** sleep's schema and handler (app/kinds/sleep.ts declares the kind). */
export default defineJob({
  payload: z.object({
    ms: z
      .number()
      .int()
      .min(0)
      .max(15 * 60_000),
  }),
  handler: async ({ ms }, ctx) => {
    await delay(ms, undefined, { signal: ctx.signal });
    return { sleptMs: ms };
  },
});
