import { SendMessageCommand } from "@aws-sdk/client-sqs";
import { describe, expect, test } from "vitest";
import * as z from "zod";
import { systemClock } from "../../lib/clock.ts";
import { defineUnboundKind } from "../../lib/job/kind.ts";
import type { DeliveryLane } from "../../lib/job/lanes.ts";
import { cancelJob } from "../../lib/ops/cancel-job.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import { encodeMessageBody } from "../../lib/transport/job-message.ts";
import { type Harness, harnessPerTest, settled } from "../support/engine-harness.ts";
import { deferred, waitFor } from "../support/wait.ts";
import { doomedEngine } from "./crash-switch.ts";

/** Runs per job id, and a gate that holds every run until a test opens it. */
const runs = new Map<string, number>();
/** The fence each job's last run saw, or "absent" (only a claim has one). */
const sawFence = new Map<string, string | undefined>();
let gate = deferred();

const laneKind = (lane: DeliveryLane, name: string, behaviour: "echo" | "gated" | "fail-once" | "fail") =>
  defineUnboundKind({
    name,
    queue: "default",
    payload: z.object({ tag: z.string() }),
    maxAttempts: 2,
    timeoutSeconds: 30,
    backoff: { baseSeconds: 1, maxSeconds: 1 },
    lane,
    handler: async ({ tag }, ctx) => {
      runs.set(ctx.job.id, (runs.get(ctx.job.id) ?? 0) + 1);
      sawFence.set(ctx.job.id, "fence" in ctx ? ctx.fence : "absent");
      if (behaviour === "gated") await gate.promise;
      if (behaviour === "fail") throw new Error(`${tag} always fails`);
      if (behaviour === "fail-once" && ctx.attempt === 1) throw new Error(`${tag} fails once`);
      return { tag, attempt: ctx.attempt };
    },
  });

const kinds = [
  laneKind("lean", "lean-echo", "echo"),
  laneKind("lean", "lean-gated", "gated"),
  laneKind("at-least-once", "alo-echo", "echo"),
  laneKind("at-least-once", "alo-gated", "gated"),
  laneKind("fire-and-forget", "faf-echo", "echo"),
  laneKind("fire-and-forget", "faf-fail-once", "fail-once"),
  laneKind("fire-and-forget", "faf-fail", "fail"),
];

const harness = harnessPerTest();
const setUp = () => harness.create({ clock: systemClock, extraKinds: kinds });

/** A second engine on its own SDK clients, so a test counts the requests one path sends. */
const counting = (h: Harness) =>
  doomedEngine(harness.emulators(), h.engine, { name: h.queue.name, url: h.urls.url });

const writes = (c: ReturnType<typeof counting>) =>
  ["PutItemCommand", "UpdateItemCommand", "PutCommand", "UpdateCommand"].reduce(
    (n, k) => n + c.crash.sent(k),
    0,
  );

/** The job's message sent once more, as SQS's at-least-once delivery may do. */
async function duplicate(h: Harness, id: string, kind: string, lane: DeliveryLane, tag: string) {
  const message = {
    v: 1 as const,
    id,
    kind,
    queue: h.queue.name,
    maxAttempts: 2,
    priority: "normal" as const,
    createdAt: Date.now(),
    runAt: Date.now(),
    payload: JSON.stringify({ tag }),
    ...(lane !== "fenced" ? { lane: lane as Exclude<DeliveryLane, "fenced"> } : {}),
  };
  await h.sqs.send(new SendMessageCommand({ QueueUrl: h.urls.url, MessageBody: encodeMessageBody(message) }));
}

describe("delivery lanes on the emulators", () => {
  test("lean: no write at enqueue, the claim builds the item; 2 writes a job; invisible until it starts", async () => {
    const h = await setUp();
    const c = counting(h);
    const { job } = await c.engine.producer.enqueue({ kind: "lean-echo", payload: { tag: "l" } });
    expect(writes(c)).toBe(0);
    expect(await getJob(h.engine.store, job.id)).toBeUndefined();
    const worker = (await import("../../lib/runtime/worker.ts")).createWorker(c.engine, {
      recordConcurrency: 10,
    });
    const out = await worker(await h.receive(1));
    expect(out.batchItemFailures).toEqual([]);
    expect(writes(c)).toBe(2);
    // No batch hold for lean: the only SQS request the worker made was none (the poller deletes).
    expect(c.crash.sent("ChangeMessageVisibilityBatchCommand")).toBe(0);
    expect(await getJob(h.engine.store, job.id)).toMatchObject({ status: "done", claimedFrom: "missing" });
    expect(sawFence.get(job.id)).toMatch(/^\S+$/);
  });

  test("lean: a duplicate delivery while it runs never runs it twice", async () => {
    const h = await setUp();
    gate = deferred();
    const { job } = await h.engine.producer.enqueue({ kind: "lean-gated", payload: { tag: "d" } });
    const poller = h.startPoller();
    await waitFor(async () => runs.get(job.id) === 1 || undefined, "the first run");
    await duplicate(h, job.id, "lean-gated", "lean", "d");
    await waitFor(
      async () => h.metrics.total("duplicateDeliveries") >= 1 || undefined,
      "the duplicate deferred",
    );
    gate.resolve();
    await settled(h, job.id, "done");
    await poller.stop();
    expect(runs.get(job.id)).toBe(1);
  });

  test("lean: a cancel before it starts leaves a tombstone, and the job never runs", async () => {
    const h = await setUp();
    const { job } = await h.engine.producer.enqueue({ kind: "lean-echo", payload: { tag: "t" } });
    const cancelled = await cancelJob(h.engine, job.id);
    expect(cancelled).toMatchObject({ outcome: "tombstoned", item: { status: "cancelled" } });
    const poller = h.startPoller();
    await waitFor(
      async () => h.metrics.total("duplicateDeliveries") >= 1 || undefined,
      "its message dropped",
    );
    await poller.stop();
    expect(runs.get(job.id)).toBeUndefined();
    expect((await getJob(h.engine.store, job.id))?.status).toBe("cancelled");
    // An id from long before SQS's retention names nothing that can run: not found, nothing written.
    await expect(cancelJob(h.engine, "01ARZ3NDEKTSV4RRFFQ69G5FAV")).rejects.toThrow(/not found/);
    expect(await getJob(h.engine.store, "01ARZ3NDEKTSV4RRFFQ69G5FAV")).toBeUndefined();
  });

  test("lean: a uniqueKey still dedupes while the job waits unwritten", async () => {
    const h = await setUp();
    const first = await h.engine.producer.enqueue({
      kind: "lean-echo",
      payload: { tag: "u" },
      uniqueKey: "k",
    });
    const again = await h.engine.producer.enqueue({
      kind: "lean-echo",
      payload: { tag: "u" },
      uniqueKey: "k",
    });
    expect(again).toMatchObject({ duplicate: true, job: { id: first.job.id, status: "queued" } });
  });

  test("at-least-once: one write a job, the result stored; a duplicate delivery runs it twice and the first end stays", async () => {
    const h = await setUp();
    const c = counting(h);
    const { job } = await c.engine.producer.enqueue({ kind: "alo-echo", payload: { tag: "a" } });
    const worker = (await import("../../lib/runtime/worker.ts")).createWorker(c.engine, {
      recordConcurrency: 10,
    });
    await worker(await h.receive(1));
    expect(writes(c)).toBe(1);
    expect(await getJob(h.engine.store, job.id)).toMatchObject({
      status: "done",
      result: '{"tag":"a","attempt":1}',
    });
    // No claim, no fence: the context has none rather than an empty string.
    expect(sawFence.get(job.id)).toBe("absent");

    gate = deferred();
    const gated = await h.engine.producer.enqueue({ kind: "alo-gated", payload: { tag: "g" } });
    await duplicate(h, gated.job.id, "alo-gated", "at-least-once", "g");
    const poller = h.startPoller();
    await waitFor(async () => runs.get(gated.job.id) === 2 || undefined, "both deliveries running at once");
    gate.resolve();
    await settled(h, gated.job.id, "done");
    await waitFor(
      async () => h.metrics.total("duplicateDeliveries") >= 1 || undefined,
      "the second end dropped",
    );
    await poller.stop();
    expect(runs.get(gated.job.id)).toBe(2);
  });

  test("fire-and-forget: nothing written on success; a failure is recorded, and the success after it", async () => {
    const h = await setUp();
    const c = counting(h);
    const ok = await c.engine.producer.enqueue({ kind: "faf-echo", payload: { tag: "f" } });
    const worker = (await import("../../lib/runtime/worker.ts")).createWorker(c.engine, {
      recordConcurrency: 10,
    });
    await worker(await h.receive(1));
    expect(runs.get(ok.job.id)).toBe(1);
    expect(writes(c)).toBe(0);
    expect(await getJob(h.engine.store, ok.job.id)).toBeUndefined();

    const once = await h.engine.producer.enqueue({ kind: "faf-fail-once", payload: { tag: "o" } });
    const dies = await h.engine.producer.enqueue({ kind: "faf-fail", payload: { tag: "x" } });
    const poller = h.startPoller();
    await waitFor(async () => (await getJob(h.engine.store, once.job.id))?.lastError, "the failure recorded");
    const done = await settled(h, once.job.id, "done");
    expect(done).toMatchObject({ attempts: 2, result: '{"tag":"o","attempt":2}' });
    const dead = await settled(h, dies.job.id, "dead");
    await poller.stop();
    expect(dead).toMatchObject({ attempts: 2, lastError: "x always fails" });
  });

  test("a lane a group can't hear from, or one the app doesn't know, is refused", async () => {
    const h = await setUp();
    await expect(
      h.engine.groups.create({
        children: [{ kind: "faf-echo", payload: { tag: "g" } }],
        onComplete: { kind: "echo" },
      }),
    ).rejects.toThrow(/some children are invalid/);
    const { validateDeclarations } = await import("../../lib/declarations/validate-app.ts");
    const problems = validateDeclarations({
      queues: h.engine.app.queues,
      kinds: [{ ...kinds[0], name: "odd", lane: "sometimes" as DeliveryLane } as never],
      poolKinds: [],
    });
    expect(problems.join()).toMatch(/kind "odd": lane "sometimes" is not one of fenced, lean/);
  });
});
