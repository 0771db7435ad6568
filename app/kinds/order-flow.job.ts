import * as z from "zod";
import { defineJob } from "../define.ts";

/** The schema and handler of the kind "order-flow" (app/kinds/order-flow.ts). */
export default defineJob({
  payload: z.object({ order: z.string().min(1) }),
  handler: async ({ order }, ctx) => {
    const paid = await ctx.waitForEvent("paid", { event: "order.paid", match: order, timeoutSeconds: 600 });
    return { order, paid };
  },
});
