import * as z from "zod";
import { defineKind } from "../define.ts";

/** Waits for the order's `order.paid` event (POST /events), then returns its data. */
export const orderFlow = defineKind({
  name: "order-flow",
  payload: z.object({ order: z.string().min(1) }),
  queue: "default",
  maxAttempts: 3,
  timeoutSeconds: 30,
  handler: async ({ order }, ctx) => {
    const paid = await ctx.waitForEvent("paid", { event: "order.paid", match: order, timeoutSeconds: 600 });
    return { order, paid };
  },
});
