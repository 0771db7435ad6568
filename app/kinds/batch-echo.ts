import * as z from "zod";
import { defineBatchKind } from "../define.ts";

/**
 * A batch kind to try with curl: jobs of one `key` run together, up to 50 a call, each answering
 * where it ran (its call's id and size, its place in it), so anyone can see how jobs were grouped.
 * An item whose payload says `fail` fails alone.
 */
export const batchEcho = defineBatchKind({
  name: "batch-echo",
  payload: z.object({
    key: z.string().min(1).max(256),
    value: z.json().optional(),
    fail: z.boolean().optional(),
  }),
  queue: "batch",
  maxAttempts: 3,
  timeoutSeconds: 30,
  key: (payload) => payload.key,
  batch: { maxSize: 50, maxWaitSeconds: 2, policy: "duration", maxPendingPerKey: 1000 },
  handler: async (items, ctx) =>
    items.map((item, index) =>
      item.payload.fail
        ? new Error(`item ${index} of batch ${ctx.batchId} asked to fail`)
        : { batchId: ctx.batchId, batchSize: items.length, key: ctx.key, index },
    ),
});
