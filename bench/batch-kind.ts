import * as z from "zod";
import { app } from "../app/index.ts";
import { type App, defineApp } from "../lib/declarations/define-app.ts";
import type { QueueDeclaration } from "../lib/declarations/queue-declaration.ts";
import { batchKindDefinition } from "../lib/job/batch.ts";

/**
 * The bench's batch scenario (docs/architecture.md §18): a no-op batch kind of maxSize 100 on a
 * queue whose event source gathers 100 records for up to a second. Bench-only, never deployed.
 */
export const BENCH_BATCH_KIND = "bench-batch";
export const BENCH_BATCH_QUEUE = "bench-batch";
export const BENCH_BATCH_SIZE = 100;

/** The app's own batch queue, gathering 100 records instead of 50. */
const queue: QueueDeclaration = {
  ...(app.queues.find((q) => q.name === "batch") as QueueDeclaration),
  name: BENCH_BATCH_QUEUE,
  batchSize: BENCH_BATCH_SIZE,
  batchWindowSeconds: 1,
};

export const benchBatchKind = batchKindDefinition({
  name: BENCH_BATCH_KIND,
  queue: BENCH_BATCH_QUEUE,
  payload: z.object({ key: z.string(), seq: z.number(), pad: z.string() }),
  maxAttempts: 3,
  timeoutSeconds: 30,
  key: (p) => p.key,
  batch: { maxSize: BENCH_BATCH_SIZE, maxWaitSeconds: 1, policy: "size" },
  handler: async (items) => items.map(() => null),
});

/** The app with the bench's batch queue and kind added. */
export const batchBenchApp = (): App =>
  defineApp({ ...app, queues: [...app.queues, queue], kinds: [...app.kinds, benchBatchKind] });
