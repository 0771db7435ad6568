import { describe, expect, it } from "vitest";
import * as z from "zod";
import type { EnqueueResult } from "../../lib/job/schemas.ts";
import { followUpKey } from "../../lib/runtime/handler-context.ts";
import { OffsetClock } from "../support/clock.ts";
import { type Harness, harnessPerTest, settled } from "../support/engine-harness.ts";
import { CapturingLog } from "../support/pool-harness.ts";
import { kindOnDefaultQueue } from "../support/test-kinds.ts";

const harness = harnessPerTest();

const quickRetries = { backoff: { baseSeconds: 1, maxSeconds: 1 } };

describe("ctx.enqueue: follow-up jobs", () => {
  it("a handler retried after it enqueued gets its first follow-ups back, even once they finished", async () => {
    const seen: { attempt: number; first: EnqueueResult; second: EnqueueResult }[] = [];
    let h: Harness | undefined;
    const fanout = kindOnDefaultQueue(
      "fanout",
      { maxAttempts: 3, timeoutSeconds: 30 },
      async (_payload, ctx) => {
        const first = await ctx.enqueue("echo", { n: ctx.attempt });
        const second = await ctx.enqueue("echo", { n: ctx.attempt }, { step: "second" });
        seen.push({ attempt: ctx.attempt, first, second });
        // Let the follow-ups finish before the retry, so only a retained key can still dedupe them.
        if (h) await settled(h, first.job.id, "done");
        if (ctx.attempt < 3) throw new Error("fail after enqueueing");
        return { first: first.job.id, second: second.job.id };
      },
    );
    h = await harness.create({
      clock: new OffsetClock(),
      queue: quickRetries,
      extraKinds: [fanout],
      random: () => 0,
    });
    h.startPoller();
    const { job } = await h.engine.producer.enqueue({ kind: "fanout", payload: {} });
    await settled(h, job.id, "done");

    expect(seen.map((s) => s.attempt)).toEqual([1, 2, 3]);
    const firstIds = new Set(seen.map((s) => s.first.job.id));
    const secondIds = new Set(seen.map((s) => s.second.job.id));
    expect(firstIds.size).toBe(1);
    expect(secondIds.size).toBe(1);
    expect(firstIds).not.toEqual(secondIds);
    expect(seen.map((s) => s.first.duplicate)).toEqual([false, true, true]);
    const [firstId] = firstIds;
    const child = await settled(h, firstId as string, "done");
    expect(child.uniqueKey).toBe(followUpKey(job.id, "echo"));
    expect(JSON.parse(child.result as string)).toEqual({ n: 1 });
    expect(h.metrics.total("enqueued")).toBe(3);
  });

  it("a follow-up the producer refuses for its content ends the parent dead at once", async () => {
    const bad = kindOnDefaultQueue(
      "bad-follow-up",
      { maxAttempts: 5, timeoutSeconds: 30 },
      async (_payload, ctx) => ctx.enqueue("flaky", { failTimes: "many" }),
    );
    const h = await harness.create({ clock: new OffsetClock(), queue: quickRetries, extraKinds: [bad] });
    h.startPoller();
    const { job } = await h.engine.producer.enqueue({ kind: "bad-follow-up", payload: {} });
    const dead = await settled(h, job.id, "dead");
    expect(dead.attempts).toBe(1);
    expect(dead.lastError).toMatch(/follow-up "flaky" refused: payload does not match kind "flaky"/);
  });
});

describe("ctx.log", () => {
  it("stamps jobId, kind, queue and attempt on every line, and the caller's own attributes", async () => {
    const log = new CapturingLog();
    const chatty = kindOnDefaultQueue(
      "chatty",
      { maxAttempts: 1, timeoutSeconds: 30, payload: z.object({ secret: z.string() }) },
      async (_payload, ctx) => {
        ctx.log.info("working", { step: 1 });
        return null;
      },
    );
    const h = await harness.create({ clock: new OffsetClock(), extraKinds: [chatty], log });
    h.startPoller();
    const { job } = await h.engine.producer.enqueue({ kind: "chatty", payload: { secret: "hunter2" } });
    await settled(h, job.id, "done");
    const [line] = log.matching(/^working$/);
    expect(line?.attributes).toEqual({
      jobId: job.id,
      kind: "chatty",
      queue: "default",
      attempt: 1,
      step: 1,
    });
    expect(JSON.stringify(log.entries)).not.toContain("hunter2");
  });
});
