import * as z from "zod";
import { defineKind } from "../define.ts";

/** Fails its first `failTimes` attempts, then succeeds on the next (`ctx.attempt` counts from 1). */
export const flaky = defineKind({
  name: "flaky",
  payload: z.object({ failTimes: z.number().int().min(0).max(100) }),
  queue: "default",
  maxAttempts: 5,
  timeoutSeconds: 30,
  handler: async ({ failTimes }, ctx) => {
    if (ctx.attempt <= failTimes)
      throw new Error(`flaky: attempt ${ctx.attempt} of ${failTimes} planned failures`);
    return { succeededOnAttempt: ctx.attempt };
  },
});
