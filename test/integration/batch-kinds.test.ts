import { setTimeout as sleep } from "node:timers/promises";
import { ScanCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, test } from "vitest";
import * as z from "zod";
import { systemClock } from "../../lib/clock.ts";
import { UnrecoverableError } from "../../lib/errors.ts";
import { batchKindDefinition } from "../../lib/job/batch.ts";
import { cancelJob } from "../../lib/ops/cancel-job.ts";
import { createWorker } from "../../lib/runtime/worker.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import { type Harness, harnessPerTest, settled } from "../support/engine-harness.ts";
import { deferred, waitFor } from "../support/wait.ts";
import { doomedEngine } from "./crash-switch.ts";

/** What every call of the test kinds saw, and a gate that holds calls until a test opens it. */
const calls: { key: string; ids: string[]; callAborted?: boolean }[] = [];
const inFlight = new Map<string, number>();
const maxInFlight = new Map<string, number>();
let gate: ReturnType<typeof deferred<void>> | undefined;
const batchKind = (name: string, settings: { maxKeyConcurrency?: number; maxPendingPerKey?: number } = {}) =>
  batchKindDefinition({
    name,
    queue: "default",
    payload: z.object({
      key: z.string(),
      fail: z.enum(["error", "unrecoverable", "throw-all"]).optional(),
      holdMs: z.number().optional(),
      peers: z.number().optional(),
    }),
    maxAttempts: 2,
    timeoutSeconds: 30,
    backoff: { baseSeconds: 1, maxSeconds: 1 },
    key: (p) => p.key,
    batch: { maxSize: 20, maxWaitSeconds: 1, policy: "duration", ...settings },
    handler: async (items, ctx) => {
      const call: (typeof calls)[number] = { key: ctx.key, ids: items.map((i) => i.id) };
      calls.push(call);
      const now = (inFlight.get(ctx.key) ?? 0) + 1;
      inFlight.set(ctx.key, now);
      maxInFlight.set(ctx.key, Math.max(maxInFlight.get(ctx.key) ?? 0, now));
      try {
        if (gate) await gate.promise;
        call.callAborted = ctx.signal.aborted;
        // Holds the call open, so that concurrent workers could overlap (no state is awaited here).
        const holdMs = Math.max(0, ...items.map((i) => i.payload.holdMs ?? 0));
        if (holdMs > 0) await sleep(holdMs);
        // Held until the key has had `peers` calls at once (bounded): evidence, not a hold's length,
        // that the workers overlap where the key allows it.
        const peers = Math.max(0, ...items.map((i) => i.payload.peers ?? 0));
        if (peers > 0)
          // Past the bound the call goes on, and the test's count of calls at once says what happened.
          await waitFor(
            async () => (maxInFlight.get(ctx.key) ?? 0) >= peers,
            `${peers} calls of ${ctx.key} at once`,
            10_000,
          ).catch(() => undefined);
        if (items.some((i) => i.payload.fail === "throw-all")) throw new Error("the whole call failed");
        return items.map((item, index) =>
          item.payload.fail === "error"
            ? new Error(`item ${index} failed alone`)
            : item.payload.fail === "unrecoverable"
              ? new UnrecoverableError("never again")
              : {
                  key: ctx.key,
                  index,
                  size: items.length,
                  batchId: ctx.batchId,
                  aborted: item.signal.aborted,
                },
        );
      } finally {
        inFlight.set(ctx.key, (inFlight.get(ctx.key) ?? 1) - 1);
      }
    },
  });

const kinds = [
  batchKind("batched"),
  batchKind("batched-pair", { maxKeyConcurrency: 2 }),
  batchKind("batched-capped", { maxPendingPerKey: 3 }),
  batchKindDefinition({
    name: "batched-bad-key",
    queue: "default",
    payload: z.object({ key: z.string() }),
    maxAttempts: 1,
    timeoutSeconds: 30,
    key: (p) => {
      if (p.key === "throw") throw new Error("no key for you");
      return p.key;
    },
    batch: { maxSize: 10, maxWaitSeconds: 1, policy: "immediate" },
    handler: async (items) => items.map(() => null),
  }),
];

const harness = harnessPerTest();
const setUp = () => {
  calls.length = 0;
  inFlight.clear();
  maxInFlight.clear();
  gate = undefined;
  return harness.create({
    clock: systemClock,
    extraKinds: kinds,
    queue: { batchSize: 50, batchWindowSeconds: 1, leaseSeconds: 5 },
  });
};

const enqueueAll = async (h: Harness, jobs: { kind: string; payload: unknown }[]) =>
  (await h.engine.producer.enqueueBatch(jobs)).map((r) => {
    if (!r.id) throw new Error(`enqueue failed: ${JSON.stringify(r.error)}`);
    return r.id;
  });

/** Every record the queue has now, as one SQS event (receives of 10 until none come back). */
async function drainEvent(h: Harness) {
  const records = [];
  for (;;) {
    const { Records } = await h.receive(10, 1);
    if (Records.length === 0) return { Records: records };
    records.push(...Records);
  }
}

async function items(h: Harness, prefix: string) {
  const out = await h.engine.store.doc.send(new ScanCommand({ TableName: h.engine.store.table }));
  return (out.Items ?? []).filter((i) => String(i.pk).startsWith(prefix));
}

describe("batch kinds on the Lambda tier (fauxqs, dynalite)", () => {
  test("a delivery's jobs run one call per key, each still its own job with its own result", async () => {
    const h = await setUp();
    const a = await enqueueAll(
      h,
      Array.from({ length: 25 }, () => ({ kind: "batched", payload: { key: "a" } })),
    );
    const b = await enqueueAll(
      h,
      Array.from({ length: 5 }, () => ({ kind: "batched", payload: { key: "b" } })),
    );
    const event = await drainEvent(h);
    expect(event.Records).toHaveLength(30);
    const worker = createWorker(h.engine, { recordConcurrency: 10 });
    expect((await worker(event)).batchItemFailures).toEqual([]);
    // maxSize 20: key a in two calls (20 + 5), key b in one.
    expect(calls.map((c) => [c.key, c.ids.length]).sort()).toEqual([
      ["a", 20],
      ["a", 5],
      ["b", 5],
    ]);
    for (const id of [...a, ...b]) {
      const job = await getJob(h.engine.store, id);
      expect(job).toMatchObject({ status: "done", attempts: 1 });
      const result = JSON.parse(job?.result ?? "null");
      const call = calls.find((c) => c.ids.includes(id));
      expect(result).toMatchObject({ key: call?.key, size: call?.ids.length, index: call?.ids.indexOf(id) });
    }
    expect(h.metrics.total("batchCalls")).toBe(3);
    expect(h.metrics.samples("batchItems").sort((x, y) => x - y)).toEqual([5, 5, 20]);
    // Each call's slot was given back.
    expect((await items(h, "bkey#")).map((i) => [i.pk, i.sk])).toEqual([]);
  });

  test("one failing item fails alone: the partial batch response names exactly it, its siblings finish", async () => {
    const h = await setUp();
    const [ok1, bad, ok2, dead] = await enqueueAll(h, [
      { kind: "batched", payload: { key: "k" } },
      { kind: "batched", payload: { key: "k", fail: "error" } },
      { kind: "batched", payload: { key: "k" } },
      { kind: "batched", payload: { key: "k", fail: "unrecoverable" } },
    ]);
    const event = await drainEvent(h);
    const badMessage = event.Records.find((r) => JSON.parse(r.body).id === bad)?.messageId;
    const out = await createWorker(h.engine, { recordConcurrency: 10 })(event);
    expect(out.batchItemFailures).toEqual([{ itemIdentifier: badMessage }]);
    expect(calls).toHaveLength(1);
    expect((await getJob(h.engine.store, ok1 as string))?.status).toBe("done");
    expect((await getJob(h.engine.store, ok2 as string))?.status).toBe("done");
    expect(await getJob(h.engine.store, bad as string)).toMatchObject({
      status: "queued",
      attempts: 1,
      lastError: "item 1 failed alone",
    });
    expect(await getJob(h.engine.store, dead as string)).toMatchObject({
      status: "dead",
      lastError: "never again",
    });
    // Its retry runs alone (the only record left), through the same handler.
    const retried = await settled(h, bad as string, "queued");
    expect(retried.attempts).toBe(1);
  });

  test("a throw from the whole handler fails every item of that call", async () => {
    const h = await setUp();
    const ids = await enqueueAll(h, [
      { kind: "batched", payload: { key: "t" } },
      { kind: "batched", payload: { key: "t", fail: "throw-all" } },
    ]);
    const out = await createWorker(h.engine, { recordConcurrency: 10 })(await drainEvent(h));
    expect(out.batchItemFailures).toHaveLength(2);
    for (const id of ids)
      expect(await getJob(h.engine.store, id)).toMatchObject({
        status: "queued",
        lastError: "the whole call failed",
      });
  });

  test("a cancel before the call removes the item; a cancel during it aborts that item alone", async () => {
    const h = await setUp();
    const [before, during, other] = await enqueueAll(h, [
      { kind: "batched", payload: { key: "c" } },
      { kind: "batched", payload: { key: "c" } },
      { kind: "batched", payload: { key: "c" } },
    ]);
    expect((await cancelJob(h.engine, before as string)).outcome).toBe("cancelled");
    gate = deferred();
    const running = createWorker(h.engine, { recordConcurrency: 10 })(await drainEvent(h));
    await waitFor(async () => calls.length === 1 || undefined, "the call to start");
    expect(calls[0]?.ids.sort()).toEqual([during, other].sort());
    expect((await cancelJob(h.engine, during as string)).outcome).toBe("requested");
    gate.resolve();
    expect((await running).batchItemFailures).toEqual([]);
    expect((await getJob(h.engine.store, during as string))?.status).toBe("cancelled");
    expect((await getJob(h.engine.store, other as string))?.status).toBe("done");
    expect((await getJob(h.engine.store, before as string))?.status).toBe("cancelled");
  });

  test("a cancel of every item during the call aborts the call: its signal fires, the items end at once", async () => {
    const h = await setUp();
    const ids = await enqueueAll(h, [
      { kind: "batched", payload: { key: "all" } },
      { kind: "batched", payload: { key: "all" } },
    ]);
    gate = deferred();
    const running = createWorker(h.engine, { recordConcurrency: 10 })(await drainEvent(h));
    await waitFor(async () => calls.length === 1 || undefined, "the call to start");
    for (const id of ids) expect((await cancelJob(h.engine, id)).outcome).toBe("requested");
    // The handler is still held by the gate: the call ended without waiting for it.
    expect((await running).batchItemFailures).toEqual([]);
    for (const id of ids) expect((await getJob(h.engine.store, id))?.status).toBe("cancelled");
    gate.resolve();
    await waitFor(async () => calls[0]?.callAborted !== undefined || undefined, "the handler to go on");
    expect(calls[0]?.callAborted).toBe(true);
  });

  test("a duplicate delivery of a running item is deferred, never run twice at once", async () => {
    const h = await setUp();
    // Two slots for the key, so the second delivery finds one free and its claim is what stops it.
    const [id] = await enqueueAll(h, [{ kind: "batched-pair", payload: { key: "d" } }]);
    const event = await drainEvent(h);
    gate = deferred();
    const first = createWorker(h.engine, { recordConcurrency: 10 })(event);
    await waitFor(async () => calls.length === 1 || undefined, "the first call");
    // SQS delivers the same message again (its receipt is still good for a change of visibility).
    const second = await createWorker(h.engine, { recordConcurrency: 10 })(event);
    expect(second.batchItemFailures).toHaveLength(1);
    expect(h.metrics.total("duplicateDeliveries")).toBe(1);
    gate.resolve();
    await first;
    expect(calls).toHaveLength(1);
    expect((await getJob(h.engine.store, id as string))?.status).toBe("done");
  });

  test("maxKeyConcurrency holds across four concurrent workers; every job still runs once", async () => {
    const h = await setUp();
    const jobs = [
      ...Array.from({ length: 40 }, () => ({ kind: "batched", payload: { key: "one", holdMs: 100 } })),
      ...Array.from({ length: 40 }, () => ({ kind: "batched-pair", payload: { key: "two", peers: 2 } })),
    ];
    const ids = await enqueueAll(h, jobs);
    // Slow calls of "one", so the four workers could overlap them; a call of "two" stays open until
    // a second one runs beside it (which its limit of two allows).
    const pollers = Array.from({ length: 4 }, () => h.startPoller());
    await waitFor(
      async () => {
        for (const id of ids) if ((await getJob(h.engine.store, id))?.status !== "done") return undefined;
        return true;
      },
      "every job done",
      60_000,
    );
    for (const p of pollers) await p.stop();
    expect(maxInFlight.get("one")).toBe(1);
    // The workers did overlap: the key allowed two calls at once had two.
    expect(maxInFlight.get("two")).toBe(2);
    const ran = calls.flatMap((c) => c.ids);
    expect(ran.sort()).toEqual([...ids].sort());
  }, 90_000);

  test("maxPendingPerKey: the fourth waiting job of a key is a 429, nothing written; a finished job frees its place", async () => {
    const h = await setUp();
    await enqueueAll(
      h,
      Array.from({ length: 3 }, () => ({ kind: "batched-capped", payload: { key: "x" } })),
    );
    await expect(
      h.engine.producer.enqueue({ kind: "batched-capped", payload: { key: "x" } }),
    ).rejects.toMatchObject({ code: "key_backlog_full" });
    // Another key is not affected; in a batch, the full key's item fails alone.
    const batch = await h.engine.producer.enqueueBatch([
      { kind: "batched-capped", payload: { key: "x" } },
      { kind: "batched-capped", payload: { key: "y" } },
    ]);
    expect(batch[0]?.error).toMatchObject({ code: "key_backlog_full" });
    expect(batch[1]?.id).toBeDefined();
    // Only the four admitted jobs exist: three of x and one of y.
    expect(await items(h, "job#")).toHaveLength(4);
    const event = await drainEvent(h);
    expect(event.Records).toHaveLength(4);
    await createWorker(h.engine, { recordConcurrency: 10 })(event);
    const [backlog] = await items(h, "bkey#batched-capped#x");
    expect(backlog?.pending).toBe(0);
    await expect(
      h.engine.producer.enqueue({ kind: "batched-capped", payload: { key: "x" } }),
    ).resolves.toMatchObject({
      duplicate: false,
    });
  });

  test("a key function that throws, or a key over 256 characters, is a 400 and nothing is written", async () => {
    const h = await setUp();
    await expect(
      h.engine.producer.enqueue({ kind: "batched-bad-key", payload: { key: "throw" } }),
    ).rejects.toMatchObject({
      code: "validation_error",
      issues: [{ path: "payload", message: expect.stringMatching(/threw: no key for you/) }],
    });
    await expect(
      h.engine.producer.enqueue({ kind: "batched-bad-key", payload: { key: "k".repeat(257) } }),
    ).rejects.toMatchObject({
      code: "validation_error",
      issues: [{ message: expect.stringMatching(/1\.\.256 characters, got 257/) }],
    });
    await expect(
      h.engine.producer.enqueue({ kind: "batched-bad-key", payload: { key: "" } }),
    ).rejects.toMatchObject({ code: "validation_error" });
    expect(await items(h, "")).toEqual([]);
    expect((await drainEvent(h)).Records).toEqual([]);
  });

  test("a consumer that dies mid-call leaves each item to be taken over, with exactly one completion each", async () => {
    const h = await setUp();
    const ids = await enqueueAll(
      h,
      Array.from({ length: 5 }, () => ({ kind: "batched", payload: { key: "z" } })),
    );
    const doomed = doomedEngine(harness.emulators(), h.engine, { name: h.queue.name, url: h.urls.url });
    gate = deferred();
    // The doomed consumer receives, holds, claims every item and starts the call; then it dies.
    void createWorker(doomed.engine, { recordConcurrency: 10 })(await drainEvent(h)).catch(() => undefined);
    await waitFor(async () => calls.length === 1 || undefined, "the doomed call to start");
    doomed.crash.trip();
    gate.resolve();
    gate = undefined;
    // The live consumer gets the messages back after the hold (a lease + 1 s) and takes each over.
    const poller = h.startPoller();
    for (const id of ids) {
      const done = await settled(h, id, "done");
      expect(done).toMatchObject({ attempts: 2, claimedFrom: "running" });
    }
    await poller.stop();
    // Two calls ran (the dead one's outcomes never landed), and each job was finalized once.
    expect(calls).toHaveLength(2);
    expect(h.metrics.total("succeeded")).toBe(5);
    expect(h.metrics.total("revived")).toBe(5);
  }, 60_000);
});
