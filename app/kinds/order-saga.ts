import { defineKind } from "../define.ts";

/**
 * An order's saga, the durable calls of docs/guide/durable-jobs.md together: one step per item
 * through `ctx.map` (5 at once), a child job awaited (`ctx.invoke` of echo), then a race between the
 * order's `order.shipped` event (POST /events, match = the order) and a 30 s timer
 * (order-saga.job.ts).
 */
export const orderSaga = defineKind({
  name: "order-saga",
  queue: "default",
  maxAttempts: 3,
  timeoutSeconds: 60,
  // Its schema and handler, loaded when a job of the kind first needs them.
  load: () => import("./order-saga.job.ts"),
});
