import { describe, expect, it } from "vitest";
import * as z from "zod";
import { DEFAULT_LOOKBACK_SECONDS } from "../../lib/declarations/event-declaration.ts";
import { defineUnboundKind } from "../../lib/job/kind.ts";
import type { Engine } from "../../lib/services/engine-services.ts";
import { listEventWaiters } from "../../lib/store/event-waiter-ops.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import { OffsetClock } from "../support/clock.ts";
import { type Harness, harnessPerTest } from "../support/engine-harness.ts";

/**
 * Events kept for a lookback (docs/architecture.md §22, lib/durable/event-lookback.ts) on the
 * emulators: an event that came before a wait began, within its name's lookback, resumes it (once);
 * `since: "wait"` keeps the old rule; and an event that meets a wait while its pointer and suspend
 * are being written is neither lost nor taken twice. The worker is invoked by hand, so each run's
 * suspend and what follows it are over when the call returns; the clock is moved, never waited on.
 */
let runsAfterWait = 0;
const kinds = [
  defineUnboundKind({
    name: "t-lookback",
    queue: "default",
    payload: z.object({ order: z.string(), since: z.enum(["lookback", "wait"]).optional() }),
    maxAttempts: 3,
    timeoutSeconds: 30,
    handler: async ({ order, since }, ctx) => {
      const paid = await ctx.waitForEvent("paid", {
        event: "lb.paid",
        match: order,
        timeoutSeconds: 3600,
        ...(since ? { since } : {}),
      });
      runsAfterWait += 1;
      return { paid };
    },
  }),
  defineUnboundKind({
    name: "t-lookback-twice",
    queue: "default",
    payload: z.object({ order: z.string() }),
    maxAttempts: 3,
    timeoutSeconds: 30,
    handler: async ({ order }, ctx) => {
      const wait = { event: "lb.paid", match: order, timeoutSeconds: 3600 };
      const first = await ctx.waitForEvent("first", wait);
      const second = await ctx.waitForEvent("second", wait);
      return { first, second };
    },
  }),
];

const harness = harnessPerTest();

async function start(events?: { name: string; lookbackSeconds: number }[]) {
  const clock = new OffsetClock();
  const h = await harness.create({ clock, extraKinds: kinds, ...(events ? { events } : {}) });
  runsAfterWait = 0;
  return { clock, h };
}

/** Runs the one message the queue has, as Lambda would: the run and its suspend's aftermath are over on return. */
async function runOnce(h: Harness): Promise<void> {
  const batch = await h.receive(1);
  expect(batch.Records).toHaveLength(1);
  await h.worker(batch);
}

const send = (engine: Engine, order: string, data: unknown) =>
  engine.durable.deliverEvent({ name: "lb.paid", match: order, data });

async function enqueue(h: Harness, order: string, since?: "wait") {
  const payload = since ? { order, since } : { order };
  return (await h.engine.producer.enqueue({ kind: "t-lookback", payload })).job.id;
}

async function expectDone(h: Harness, id: string, paid: unknown) {
  await runOnce(h);
  const job = await getJob(h.engine.store, id);
  expect(job?.status).toBe("done");
  expect(JSON.parse(job?.result ?? "null")).toEqual({ paid });
}

async function expectStillWaiting(h: Harness, id: string) {
  const job = await getJob(h.engine.store, id);
  expect(job?.status).toBe("scheduled");
  expect(job?.waiting).toMatchObject({ for: "event", event: "lb.paid" });
  expect(job?.steps?.paid?.v).toBeUndefined();
}

describe("events kept for a lookback", () => {
  it("an event a moment before the wait, within its lookback, resumes it with its data, once", async () => {
    const { clock, h } = await start();
    expect(await send(h.engine, "o-1", { amount: 5 })).toEqual({ resumed: 0 });
    clock.advance((DEFAULT_LOOKBACK_SECONDS - 10) * 1000);
    const id = await enqueue(h, "o-1");
    await runOnce(h);
    const resumed = await getJob(h.engine.store, id);
    expect(resumed?.waiting).toBeUndefined();
    expect(resumed?.steps?.paid?.e).toMatch(/^[0-9A-Z]{26}$/);
    // Its pointer went with the resume: a second event finds no waiter.
    expect((await listEventWaiters(h.engine.store, "lb.paid", "o-1", { limit: 10 })).waiters).toEqual([]);
    await expectDone(h, id, { amount: 5 });
    expect(runsAfterWait).toBe(1);
  });

  it("an event older than its name's lookback does not; a later one does", async () => {
    const { clock, h } = await start([{ name: "lb.paid", lookbackSeconds: 60 }]);
    await send(h.engine, "o-2", "old");
    clock.advance(61_000);
    const id = await enqueue(h, "o-2");
    await runOnce(h);
    await expectStillWaiting(h, id);
    expect(await send(h.engine, "o-2", "new")).toEqual({ resumed: 1 });
    await expectDone(h, id, "new");
  });

  it('since: "wait" keeps the old rule: an event before the wait began does not resume it', async () => {
    const { clock, h } = await start();
    await send(h.engine, "o-3", "before");
    clock.advance(1000);
    const id = await enqueue(h, "o-3", "wait");
    await runOnce(h);
    await expectStillWaiting(h, id);
    expect(await send(h.engine, "o-3", "after")).toEqual({ resumed: 1 });
    await expectDone(h, id, "after");
  });

  it("two jobs whose waits begin after the event both resume with it", async () => {
    const { clock, h } = await start();
    await send(h.engine, "o-4", { n: 1 });
    clock.advance(30_000);
    const a = await enqueue(h, "o-4");
    const b = await enqueue(h, "o-4");
    await runOnce(h);
    await runOnce(h);
    await runOnce(h);
    await runOnce(h);
    for (const id of [a, b]) {
      const job = await getJob(h.engine.store, id);
      expect(job?.status).toBe("done");
      expect(JSON.parse(job?.result ?? "null")).toEqual({ paid: { n: 1 } });
    }
  });
});

describe("a job that waits twice on one name and match", () => {
  it("takes a kept event once: its second wait waits for the next event", async () => {
    const { h } = await start();
    await send(h.engine, "o-5", 1);
    const { job } = await h.engine.producer.enqueue({ kind: "t-lookback-twice", payload: { order: "o-5" } });
    await runOnce(h);
    await runOnce(h);
    const waiting = await getJob(h.engine.store, job.id);
    expect(waiting?.status).toBe("scheduled");
    expect(waiting?.waiting).toMatchObject({ for: "event", event: "lb.paid", match: "o-5" });
    expect(waiting?.steps?.second?.v).toBeUndefined();
    expect(await send(h.engine, "o-5", 2)).toEqual({ resumed: 1 });
    await runOnce(h);
    const done = await getJob(h.engine.store, job.id);
    expect(JSON.parse(done?.result ?? "null")).toEqual({ first: 1, second: 2 });
  });
});

describe("an event racing a wait's writes", () => {
  /**
   * Sends the event from inside the run's own DynamoDB call: `when` the wait's pointer put (before
   * or after it), or before the run reads the events kept for it. result: the event's answer.
   */
  function sendDuring(
    h: Harness,
    order: string,
    when: "before-pointer" | "after-pointer" | "before-buffer-read",
  ): Promise<{ resumed: number }> {
    let answer!: (r: { resumed: number }) => void;
    const sent = new Promise<{ resumed: number }>((resolve) => {
      answer = resolve;
    });
    let fired = false;
    const command = when === "before-buffer-read" ? "QueryCommand" : "PutItemCommand";
    const partition = when === "before-buffer-read" ? '"evb#' : '"evt#';
    h.engine.store.doc.middlewareStack.add(
      (next, context) => async (args) => {
        const hit =
          !fired && context.commandName === command && JSON.stringify(args.input).includes(partition);
        if (!hit) return next(args);
        fired = true;
        if (when !== "after-pointer") answer(await send(h.engine, order, { race: when }));
        const out = await next(args);
        if (when === "after-pointer") answer(await send(h.engine, order, { race: when }));
        return out;
      },
      { step: "initialize", name: "race-an-event" },
    );
    return sent;
  }

  it.each(["before-pointer", "after-pointer"] as const)(
    'an event that comes after the wait began, %s, while the job still runs: not lost (since: "wait")',
    async (when) => {
      const { h } = await start();
      const id = await enqueue(h, `o-${when}`, "wait");
      const sent = sendDuring(h, `o-${when}`, when);
      await runOnce(h);
      // The event found the job running: it resumed nothing itself, and its wait took it.
      expect(await sent).toEqual({ resumed: 0 });
      expect((await getJob(h.engine.store, id))?.waiting).toBeUndefined();
      await expectDone(h, id, { race: when });
      expect(runsAfterWait).toBe(1);
    },
  );

  it("an event that finds the job waiting as its run reads the kept events: one resume, not two", async () => {
    const { h } = await start();
    const id = await enqueue(h, "o-both", "wait");
    const sent = sendDuring(h, "o-both", "before-buffer-read");
    await runOnce(h);
    expect(await sent).toEqual({ resumed: 1 });
    expect(h.metrics.total("resumed")).toBe(1);
    await expectDone(h, id, { race: "before-buffer-read" });
    expect(runsAfterWait).toBe(1);
  });
});
