import { describe, expect, it } from "vitest";
import * as z from "zod";
import { defineUnboundKind } from "../../lib/job/kind.ts";
import { PRIORITY_STEP_MS, type Priority } from "../../lib/job/priority.ts";
import { createWorker } from "../../lib/runtime/worker.ts";
import { ManualClock } from "../support/clock.ts";
import { type Harness, harnessPerTest } from "../support/engine-harness.ts";

/**
 * A Lambda worker's batch runs its records in priority order (docs/guide/flow-control.md,
 * "Priorities"), aged as a flow key's line is: with one record at a time, the higher priority
 * starts first unless the lower one was enqueued more than a step per level before it. Real
 * enqueues, a real receive from fauxqs, the real worker on dynalite.
 */
const started: string[] = [];
const kind = defineUnboundKind({
  name: "prio-record",
  queue: "default",
  payload: z.object({ name: z.string() }),
  maxAttempts: 1,
  timeoutSeconds: 30,
  handler: async ({ name }) => {
    started.push(name);
    return null;
  },
});
const harness = harnessPerTest();

/** Every record the queue has now, as one SQS event. */
async function drainEvent(h: Harness) {
  const records = [];
  for (;;) {
    const { Records } = await h.receive(10, 1);
    if (Records.length === 0) return { Records: records };
    records.push(...Records);
  }
}

describe("a Lambda worker's batch", () => {
  it("starts its records by aged priority, one at a time", async () => {
    started.length = 0;
    const clock = new ManualClock();
    const h = await harness.create({ clock, extraKinds: [kind] });
    const enqueue = (name: string, priority: Priority) =>
      h.engine.producer.enqueue({ kind: kind.name, payload: { name }, priority });
    // `old` (priority 1) comes more than 4 steps before `late` (priority 5): it goes first of the two.
    await enqueue("old 1", 1);
    clock.advance(4 * PRIORITY_STEP_MS + 1_000);
    for (const [name, priority] of [
      ["p1", 1],
      ["p3", "normal"],
      ["late 5", 5],
      ["p2", 2],
      ["p4", 4],
    ] as const)
      await enqueue(name, priority);
    const event = await drainEvent(h);
    expect(event.Records).toHaveLength(6);
    const out = await createWorker(h.engine, { recordConcurrency: 1 })(event);
    expect(out.batchItemFailures).toEqual([]);
    expect(started).toEqual(["old 1", "late 5", "p4", "p3", "p2", "p1"]);
  });
});
