import { defineKind } from "../define.ts";

/** Waits for the order's `order.paid` event (POST /events), then returns its data. */
export const orderFlow = defineKind({
  name: "order-flow",
  queue: "default",
  maxAttempts: 3,
  timeoutSeconds: 30,
  // Its schema and handler, loaded when a job of the kind first needs them.
  load: () => import("./order-flow.job.ts"),
});
