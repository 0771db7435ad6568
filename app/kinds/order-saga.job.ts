import * as z from "zod";
import { defineJob } from "../define.ts";

/** `failAt`: the item whose step fails on the job's first attempt, so its retry runs that step alone. */
export interface OrderSagaResult {
  order: string;
  items: number;
  /** Whether order.shipped came before the 30 s timer. */
  shipped: boolean;
  /** The echo child's result. */
  echo: unknown;
}

/** The schema and handler of the kind "order-saga" (app/kinds/order-saga.ts). */
export default defineJob({
  payload: z.object({
    order: z.string().min(1).max(200),
    items: z.number().int().min(1).max(50),
    failAt: z.number().int().min(0).max(49).optional(),
  }),
  // Its result type is written out: inferred, it would depend on echo's through the app's kinds, which
  // include this kind (a cycle TypeScript can't infer through).
  handler: async ({ order, items, failAt }, ctx): Promise<OrderSagaResult> => {
    const indexes = Array.from({ length: items }, (_, i) => i);
    const reserved = await ctx.map(
      "reserve",
      indexes,
      (item) => {
        if (item === failAt && ctx.attempt === 1)
          throw new Error(`order ${order}: item ${item} could not be reserved on the first attempt`);
        return { item, reserved: true };
      },
      { concurrency: 5 },
    );
    const echo = await ctx.invoke("echo", { order, reserved: reserved.length });
    const shipping = await ctx.waitForAny("shipping", [
      ctx.event("shipped", { event: "order.shipped", match: order }),
      ctx.timer("gave-up", 30),
    ]);
    return { order, items, shipped: shipping.branch === "shipped", echo };
  },
});
