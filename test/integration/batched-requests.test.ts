import { describe, expect, test } from "vitest";
import { systemClock } from "../../lib/clock.ts";
import { createWorker } from "../../lib/runtime/worker.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import { harnessPerTest } from "../support/engine-harness.ts";
import { doomedEngine } from "./crash-switch.ts";

/**
 * Requests are batched wherever SQS allows it (docs/architecture.md §11), counted on the real SDK
 * clients of a second engine against the emulators.
 */
const harness = harnessPerTest();

describe("batched requests", () => {
  test("a batch of unique-key and large-payload jobs goes out in SendMessageBatch requests of 10", async () => {
    const h = await harness.create({ clock: systemClock });
    const counted = doomedEngine(harness.emulators(), h.engine, { name: h.queue.name, url: h.urls.url });
    const unique = Array.from({ length: 10 }, (_, i) => ({
      kind: "echo",
      payload: { i },
      uniqueKey: `u-${i}`,
    }));
    const large = Array.from({ length: 5 }, (_, i) => ({
      kind: "echo",
      payload: { i, pad: "x".repeat(2000) },
    }));
    const results = await counted.engine.producer.enqueueBatch([...unique, ...large]);
    expect(results.map((r) => r.error)).toEqual(Array(15).fill(undefined));
    expect(counted.crash.sent("SendMessageBatchCommand")).toBe(2);
    expect(counted.crash.sent("SendMessageCommand")).toBe(0);
    // The same keys again are duplicates: nothing is sent for them.
    const again = await counted.engine.producer.enqueueBatch(unique);
    expect(again.map((r) => r.duplicate)).toEqual(Array(10).fill(true));
    expect(again.map((r) => r.id)).toEqual(results.slice(0, 10).map((r) => r.id));
    expect(counted.crash.sent("SendMessageBatchCommand")).toBe(2);
    for (const r of results) expect((await getJob(h.engine.store, r.id ?? ""))?.status).toBe("queued");
  });

  test("the retries of one worker invocation set their backoffs in one ChangeMessageVisibilityBatch", async () => {
    const h = await harness.create({ clock: systemClock });
    const counted = doomedEngine(harness.emulators(), h.engine, { name: h.queue.name, url: h.urls.url });
    await h.engine.producer.enqueueBatch(Array.from({ length: 10 }, () => ({ kind: "fail", payload: {} })));
    const event = await h.receive(10, 2);
    expect(event.Records).toHaveLength(10);
    const out = await createWorker(counted.engine, { recordConcurrency: 10 })(event);
    expect(out.batchItemFailures).toHaveLength(10);
    // One to hide the batch for a lease, one for the ten backoffs: none one by one.
    expect(counted.crash.sent("ChangeMessageVisibilityBatchCommand")).toBe(2);
    expect(counted.crash.sent("ChangeMessageVisibilityCommand")).toBe(0);
  });
});
