import { describe, expect, it } from "vitest";
import { cancel } from "../../lib/store/finalize-ops.ts";
import { getQueueState } from "../../lib/store/queue-state.ts";
import { getJob, listJobs } from "../../lib/store/read-ops.ts";
import { OffsetClock } from "../support/clock.ts";
import { harnessPerTest, settled } from "../support/engine-harness.ts";
import { kindOnDefaultQueue } from "../support/test-kinds.ts";
import { deferred, waitFor } from "../support/wait.ts";

const harness = harnessPerTest();

describe("worker on fauxqs + dynalite", () => {
  it("retries a flaky job with backoff and finishes it on the third attempt", async () => {
    // random 0 → each retry waits exactly half the nominal delay: 1 s, then 1 s (max 2, half 1).
    const h = await harness.create({
      clock: new OffsetClock(),
      queue: { backoff: { baseSeconds: 2, maxSeconds: 2 } },
      random: () => 0,
    });
    h.startPoller();
    const { job } = await h.engine.producer.enqueue({ kind: "flaky", payload: { failTimes: 2 } });
    const done = await settled(h, job.id, "done");
    expect(done.attempts).toBe(3);
    expect(JSON.parse(done.result as string)).toEqual({ succeededOnAttempt: 3 });
    expect(done.lastError).toMatch(/attempt 2/);
    expect(h.metrics.total("retried")).toBe(2);
    expect(h.metrics.total("succeeded")).toBe(1);
  });

  it("marks a job dead after maxAttempts with its error, and indexes it for operators", async () => {
    const h = await harness.create({
      clock: new OffsetClock(),
      queue: { backoff: { baseSeconds: 1, maxSeconds: 1 } },
    });
    h.startPoller();
    const { job } = await h.engine.producer.enqueue({
      kind: "fail",
      payload: { message: "boom" },
      maxAttempts: 2,
    });
    const dead = await settled(h, job.id, "dead");
    expect(dead.attempts).toBe(2);
    expect(dead.lastError).toBe("boom");
    const page = await listJobs(h.engine.store, { queue: "default", status: "dead", limit: 10 });
    expect(page.items.map((i) => i.id)).toEqual([job.id]);
    expect(h.metrics.total("dead")).toBe(1);
  });

  it("kills an invalid payload at once, without retrying", async () => {
    const h = await harness.create({ clock: new OffsetClock() });
    h.startPoller();
    // Bypass the producer's validation the way a stale producer would: send the message directly.
    const { job } = await h.engine.producer.enqueue({ kind: "echo", payload: 1 });
    const sendRaw = (id: string, payload: string) =>
      h.engine.transport.send({
        message: {
          v: 1,
          id,
          kind: "flaky",
          queue: "default",
          maxAttempts: 5,
          priority: "normal",
          createdAt: 0,
          runAt: 0,
          payload,
        },
        delaySeconds: 0,
      });
    await sendRaw("bad-payload-job", '{"failTimes":"two"}');
    await sendRaw("not-json-job", "{not json");
    const dead = await settled(h, "bad-payload-job", "dead");
    expect(dead.attempts).toBe(1);
    expect(dead.lastError).toMatch(/^invalid payload: failTimes/);
    expect(await settled(h, "not-json-job", "dead")).toMatchObject({
      attempts: 1,
      lastError: "invalid payload: not JSON",
    });
    await settled(h, job.id, "done");
  });

  it("never runs a handler twice for a duplicate delivery while the job is running", async () => {
    let runs = 0;
    const gate = deferred();
    const started = deferred();
    const slow = kindOnDefaultQueue("gated", { maxAttempts: 3, timeoutSeconds: 60 }, async () => {
      runs++;
      started.resolve();
      await gate.promise;
      return { runs };
    });
    const h = await harness.create({ clock: new OffsetClock(), extraKinds: [slow] });
    const { job } = await h.engine.producer.enqueue({ kind: "gated", payload: {} });
    const first = await h.receive(1);
    expect(first.Records).toHaveLength(1);
    const firstRun = h.worker(first);
    await started.promise;
    // SQS redelivers the same message (at-least-once): make it visible again and receive it.
    await h.engine.transport.changeVisibility("default", first.Records[0]?.receiptHandle as string, 0);
    const dup = await h.receive(1);
    expect(dup.Records[0]?.messageId).toBe(first.Records[0]?.messageId);
    const dupAnswer = await h.worker(dup);
    expect(dupAnswer.batchItemFailures).toEqual([{ itemIdentifier: dup.Records[0]?.messageId }]);
    expect(runs).toBe(1);
    gate.resolve();
    expect((await firstRun).batchItemFailures).toEqual([]);
    const done = await getJob(h.engine.store, job.id);
    expect(done?.status).toBe("done");
    expect(done?.attempts).toBe(1);
    expect(h.metrics.total("duplicateDeliveries")).toBe(1);
  });

  it("after a crash mid-job, the lease expires, the message reappears and another worker finishes exactly once", async () => {
    const clock = new OffsetClock();
    const completions: string[] = [];
    const hang = deferred();
    let attempt = 0;
    const crashy = kindOnDefaultQueue("crashy", { maxAttempts: 3, timeoutSeconds: 600 }, async (_p, ctx) => {
      attempt = ctx.attempt;
      if (ctx.attempt === 1) await hang.promise; // the "crashed" worker never gets further
      completions.push(`attempt ${ctx.attempt}`);
      return { by: ctx.attempt };
    });
    // Long lease (no heartbeat fires during the test), expired by moving the clock.
    const h = await harness.create({ clock, extraKinds: [crashy], queue: { leaseSeconds: 120 } });
    const { job } = await h.engine.producer.enqueue({ kind: "crashy", payload: {} });
    const first = await h.receive(1);
    const crashed = h.worker(first);
    await waitFor(async () => attempt === 1, "first attempt to start");

    clock.advance(121_000); // the dead worker's lease is now expired
    // …and so is the worker's hold on the message (one lease + 1 s), which SQS times on its own clock.
    await h.engine.transport.changeVisibility("default", first.Records[0]?.receiptHandle as string, 0);
    const again = await waitFor(async () => {
      const event = await h.receive(1, 2);
      return event?.Records.length ? event : undefined;
    }, "the message to reappear");
    expect((await h.worker(again)).batchItemFailures).toEqual([]);
    const done = await getJob(h.engine.store, job.id);
    expect(done).toMatchObject({ status: "done", attempts: 2, claimedFrom: "running" });
    expect(h.metrics.total("revived")).toBe(1);

    // The zombie wakes up: its finalize is fenced off and the job stays as the new owner left it.
    hang.resolve();
    expect((await crashed).batchItemFailures).toHaveLength(1);
    expect(await getJob(h.engine.store, job.id)).toMatchObject({
      status: "done",
      result: JSON.stringify({ by: 2 }),
    });
    expect(h.metrics.total("succeeded")).toBe(1);
    expect(h.metrics.total("leaseLost")).toBe(1);
  });

  it("runs a job whose enqueue died between the message and the item write", async () => {
    const h = await harness.create({ clock: new OffsetClock() });
    h.startPoller();
    const now = Date.now();
    await h.engine.transport.send({
      message: {
        v: 1,
        id: "orphan-message",
        kind: "echo",
        queue: "default",
        maxAttempts: 3,
        priority: "normal",
        createdAt: now,
        runAt: now,
        payload: '{"x":1}',
      },
      delaySeconds: 0,
    });
    const done = await settled(h, "orphan-message", "done");
    expect(done).toMatchObject({
      claimedFrom: "missing",
      attempts: 1,
      result: '{"x":1}',
      payload: '{"x":1}',
    });
  });

  it("cancels a running sleep through its heartbeat", async () => {
    const h = await harness.create({ clock: new OffsetClock(), queue: { leaseSeconds: 1 } });
    h.startPoller();
    const { job } = await h.engine.producer.enqueue({ kind: "sleep", payload: { ms: 60_000 } });
    await settled(h, job.id, "running");
    const { item: requested } = await cancel(h.engine.store, job.id, 0);
    expect(requested).toMatchObject({ status: "running", cancelRequested: true });
    const cancelled = await settled(h, job.id, "cancelled");
    expect(cancelled.attempts).toBe(1);
    expect(h.metrics.total("cancelled")).toBe(1);
  });

  it("throttling cools the queue down without spending an attempt", async () => {
    const { ThrottledError } = await import("../../lib/errors.ts");
    let calls = 0;
    const throttly = kindOnDefaultQueue("throttly", { maxAttempts: 1, timeoutSeconds: 30 }, async () => {
      calls++;
      if (calls === 1) throw new ThrottledError(1);
      return "ok";
    });
    const h = await harness.create({ clock: new OffsetClock(), extraKinds: [throttly] });
    h.startPoller();
    const { job } = await h.engine.producer.enqueue({ kind: "throttly", payload: {} });
    const done = await settled(h, job.id, "done");
    // maxAttempts 1 and it still succeeded: the throttled run gave its attempt back.
    expect(done.attempts).toBe(1);
    expect(calls).toBe(2);
    expect((await getQueueState(h.engine.store, "default")).cooldownUntil).toBeGreaterThan(0);
    expect(h.metrics.total("throttled")).toBe(1);
  });
});
