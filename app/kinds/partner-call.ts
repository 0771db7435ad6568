import * as z from "zod";
import { ThrottledError } from "../../lib/errors.ts";
import { defineKind } from "../define.ts";

/**
 * Stands for a call to a partner API that allows a few requests per second across the whole
 * cluster: each run takes a token from the `partner-api` bucket, and when none is left it reports
 * Throttled, which cools the queue down without spending the attempt.
 */
export const partnerCall = defineKind({
  name: "partner-call",
  payload: z.object({ orderId: z.string().min(1) }).strict(),
  queue: "default",
  maxAttempts: 5,
  timeoutSeconds: 30,
  handler: async ({ orderId }, ctx) => {
    const token = await ctx.rateLimit("partner-api");
    if (!token.granted) throw new ThrottledError(token.waitMs / 1000, "partner-api budget spent");
    return { orderId, confirmedAt: new Date().toISOString() };
  },
});
