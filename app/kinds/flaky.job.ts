import * as z from "zod";
import { defineJob } from "../define.ts";

/** The schema and handler of the kind "flaky" (app/kinds/flaky.ts). */
export default defineJob({
  payload: z.object({ failTimes: z.number().int().min(0).max(100) }),
  handler: async ({ failTimes }, ctx) => {
    if (ctx.attempt <= failTimes)
      throw new Error(`flaky: attempt ${ctx.attempt} of ${failTimes} planned failures`);
    return { succeededOnAttempt: ctx.attempt };
  },
});
