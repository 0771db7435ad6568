import { DeleteQueueCommand } from "@aws-sdk/client-sqs";
import { describe, expect, test } from "vitest";
import * as z from "zod";
import { systemClock } from "../../lib/clock.ts";
import { defineUnboundKind } from "../../lib/job/kind.ts";
import { readCoalesceLock } from "../../lib/store/coalesce-ops.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import { type Harness, harnessPerTest } from "../support/engine-harness.ts";
import { recordSpans } from "../support/span-recorder.ts";

/**
 * A single enqueue, a batch and a debounced or singleton enqueue are one write order
 * (lib/producer/write-order.ts, docs/architecture.md §6 and §19): each job's key lock, then its
 * message, then its item; and when the message can't go out, its lock given back and no item. The
 * requests are seen as the emulators get them, each put down to the job it is for.
 */
const single = defineUnboundKind({
  name: "test-order-singleton",
  queue: "default",
  payload: z.object({ doc: z.string() }),
  maxAttempts: 2,
  timeoutSeconds: 30,
  singleton: { key: (p) => p.doc, mode: "cancel-running" },
  handler: async () => null,
});

const harness = harnessPerTest();
const exporter = recordSpans();

type Step = "lock" | "send" | "item" | "unlock";

/** Each job's writes and sends in the order they reach the emulators (reads left out). */
function recordSteps(h: Harness): Map<string, Step[]> {
  const steps = new Map<string, Step[]>();
  const note = (id: unknown, step: Step) => {
    if (typeof id !== "string") return;
    steps.set(id, [...(steps.get(id) ?? []), step]);
  };
  const text = (v: unknown): string | undefined =>
    typeof v === "string" ? v : ((v as { S?: string } | undefined)?.S ?? undefined);
  h.engine.store.doc.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as {
        Item?: Record<string, unknown>;
        Key?: Record<string, unknown>;
        ExpressionAttributeValues?: Record<string, unknown>;
      };
      const pk = text(input.Item?.pk ?? input.Key?.pk) ?? "";
      const command = context.commandName ?? "";
      const named = Object.values(input.ExpressionAttributeValues ?? {}).map(text);
      if (/Put/.test(command) && pk.startsWith("job#")) note(text(input.Item?.id), "item");
      if (/Put/.test(command) && /^(uniq|coal)#/.test(pk)) {
        // A coalesce lock put back names the job it named before; the condition names the job giving it back.
        const back = pk.startsWith("coal#") && named.some((id) => id !== undefined && steps.has(id));
        if (back) for (const id of named) note(id, "unlock");
        else note(text(input.Item?.jobId), "lock");
      }
      if (/Delete/.test(command) && pk.startsWith("uniq#")) for (const id of named) note(id, "unlock");
      return next(args);
    },
    { step: "initialize", name: "writeOrderSteps" },
  );
  h.sqs.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { MessageBody?: string; Entries?: { Id?: string }[] };
      if (context.commandName === "SendMessageCommand")
        note((JSON.parse(input.MessageBody ?? "{}") as { id?: string }).id, "send");
      if (context.commandName === "SendMessageBatchCommand")
        for (const entry of input.Entries ?? []) note(entry.Id, "send");
      return next(args);
    },
    { step: "initialize", name: "writeOrderSends" },
  );
  return steps;
}

describe("one enqueue write order on the emulators", () => {
  test("single, batch and singleton enqueues each write lock → message → item", async () => {
    const h = await harness.create({ clock: systemClock, extraKinds: [single] });
    const steps = recordSteps(h);
    const alone = await h.engine.producer.enqueue({ kind: "echo", payload: 1, uniqueKey: "order-1" });
    const batch = await h.engine.producer.enqueueBatch([
      { kind: "echo", payload: 2, uniqueKey: "order-2" },
      { kind: "echo", payload: 3, uniqueKey: "order-3" },
      { kind: single.name, payload: { doc: "b" } },
    ]);
    const keyed = await h.engine.producer.enqueue({ kind: single.name, payload: { doc: "a" } });

    const ids = [alone.job.id, ...batch.map((r) => r.id), keyed.job.id];
    expect(ids.every((id) => typeof id === "string")).toBe(true);
    for (const id of ids)
      expect({ id, steps: steps.get(id as string) }).toEqual({ id, steps: ["lock", "send", "item"] });
  });

  test("a message that can't go out: every path gives its lock back and writes no item", async () => {
    const h = await harness.create({ clock: systemClock, extraKinds: [single] });
    // The key's earlier job, which the lock names again once the new one's send has failed.
    const earlier = await h.engine.producer.enqueue({ kind: single.name, payload: { doc: "a" } });
    const steps = recordSteps(h);
    await h.sqs.send(new DeleteQueueCommand({ QueueUrl: h.urls.url }));

    await expect(
      h.engine.producer.enqueue({ kind: "echo", payload: 1, uniqueKey: "order-1" }),
    ).rejects.toThrow();
    const batch = await h.engine.producer.enqueueBatch([{ kind: "echo", payload: 2, uniqueKey: "order-2" }]);
    expect(batch[0]?.error?.code).toBe("internal");
    await expect(h.engine.producer.enqueue({ kind: single.name, payload: { doc: "a" } })).rejects.toThrow();
    const keyedBatch = await h.engine.producer.enqueueBatch([{ kind: single.name, payload: { doc: "a" } }]);
    expect(keyedBatch[0]?.error?.code).toBe("internal");

    const failed = [...steps.entries()];
    expect(failed).toHaveLength(4);
    for (const [id, seen] of failed) {
      expect({ id, seen }).toEqual({ id, seen: ["lock", "send", "unlock"] });
      expect(await getJob(h.engine.store, id)).toBeUndefined();
    }
    expect((await readCoalesceLock(h.engine.store, single.name, "a"))?.jobId).toBe(earlier.job.id);
  });

  test("a singleton job of a batch gets its producer span and stores its trace, as a single one does", async () => {
    const h = await harness.create({ clock: systemClock, extraKinds: [single] });
    const producerSpan = "00f067aa0ba902b7";
    const traceparent = `00-4bf92f3577b34da6a3ce929d0e0e4736-${producerSpan}-01`;
    exporter.reset();
    const [keyed, plain] = await h.engine.producer.enqueueBatch(
      [
        { kind: single.name, payload: { doc: "t" } },
        { kind: "echo", payload: 1 },
      ],
      traceparent,
    );
    for (const [result, kind] of [
      [keyed, single.name],
      [plain, "echo"],
    ] as const) {
      const spans = exporter
        .getFinishedSpans()
        .filter(
          (s) => s.name === `skyforge.enqueue ${kind}` && s.attributes["skyforge.job.id"] === result?.id,
        );
      expect(spans, kind).toHaveLength(1);
      expect(spans[0]?.parentSpanContext?.spanId, kind).toBe(producerSpan);
      const job = await getJob(h.engine.store, result?.id ?? "");
      expect(job?.trace, kind).toContain(spans[0]?.spanContext().spanId);
    }
  });
});
