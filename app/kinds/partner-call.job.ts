import * as z from "zod";
import { ThrottledError } from "../../lib/errors.ts";
import { defineJob } from "../define.ts";

/** The schema and handler of the kind "partner-call" (app/kinds/partner-call.ts). */
export default defineJob({
  payload: z.object({ orderId: z.string().min(1) }).strict(),
  handler: async ({ orderId }, ctx) => {
    const token = await ctx.rateLimit("partner-api");
    if (!token.granted) throw new ThrottledError(token.waitMs / 1000, "partner-api budget spent");
    return { orderId, confirmedAt: new Date().toISOString() };
  },
});
