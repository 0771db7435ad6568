import { describe, expect, it } from "vitest";
import * as z from "zod";
import { completeWaitToken, tokenView } from "../../lib/durable/durable-tokens.ts";
import type { WaitToken } from "../../lib/job/durable.ts";
import { defineUnboundKind } from "../../lib/job/kind.ts";
import { cancelJob } from "../../lib/ops/cancel-job.ts";
import { runReaper } from "../../lib/ops/reaper.ts";
import type { Engine } from "../../lib/services/engine-services.ts";
import { listEventWaiters } from "../../lib/store/event-waiter-ops.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import { OffsetClock } from "../support/clock.ts";
import { type Harness, harnessPerTest, settled } from "../support/engine-harness.ts";

/**
 * Racing waits (`ctx.waitForAny`, docs/architecture.md §22) on the emulators: a token, an event and
 * a timer race; the first wins and returns its branch and data, the others are cancelled at once (the
 * losing token answers 409, the losing event's waiter is gone), and a replay returns the same winner.
 * After the race the job waits for one more event, so a losing branch is tried while the job lives.
 * The worker is invoked by hand and the clock moved; nothing waits on the real clock.
 */
const kinds = [
  defineUnboundKind({
    name: "t-race",
    queue: "default",
    payload: z.object({ order: z.string() }),
    maxAttempts: 3,
    timeoutSeconds: 30,
    handler: async ({ order }, ctx) => {
      const token = await ctx.createToken("approval", { timeoutSeconds: 3600 });
      const won = await ctx.waitForAny("approve-or-ship", [
        ctx.token("approved", token, { schema: z.object({ ok: z.boolean() }) }),
        ctx.event("shipped", { event: "race.shipped", match: order }),
        ctx.timer("give-up", 60),
      ]);
      const after = await ctx.waitForEvent("after", {
        event: "race.after",
        match: order,
        timeoutSeconds: 3600,
        since: "wait",
      });
      return { won, after };
    },
  }),
  defineUnboundKind({
    name: "t-race-bad",
    queue: "default",
    payload: z.object({ what: z.enum(["one", "same"]) }),
    maxAttempts: 3,
    timeoutSeconds: 30,
    handler: async ({ what }, ctx) =>
      what === "one"
        ? ctx.waitForAny("lonely", [ctx.timer("t", 5)])
        : ctx.waitForAny("twins", [ctx.timer("t", 5), ctx.event("t", { event: "x", match: "y" })]),
  }),
  defineUnboundKind({
    name: "t-race-then-wait",
    queue: "default",
    payload: z.object({ order: z.string() }),
    maxAttempts: 3,
    timeoutSeconds: 30,
    handler: async ({ order }, ctx) => {
      const won = await ctx.waitForAny("ship-or-not", [
        ctx.event("shipped", { event: "race.shipped", match: order }),
        ctx.timer("not", 60),
      ]);
      const again = await ctx.waitForEvent("again", {
        event: "race.shipped",
        match: order,
        timeoutSeconds: 600,
      });
      return { won, again };
    },
  }),
];

const harness = harnessPerTest();

/** Runs the one message the queue has, as Lambda would: the run and its suspend's aftermath are over on return. */
async function runOnce(h: Harness): Promise<void> {
  const batch = await h.receive(1);
  expect(batch.Records).toHaveLength(1);
  await h.worker(batch);
}

async function startRace(order: string) {
  const clock = new OffsetClock();
  const h = await harness.create({ clock, extraKinds: kinds });
  const { job } = await h.engine.producer.enqueue({ kind: "t-race", payload: { order } });
  await runOnce(h);
  const waiting = await getJob(h.engine.store, job.id);
  expect(waiting?.waiting).toMatchObject({ for: "any" });
  const token = JSON.parse(waiting?.steps?.approval?.v ?? "") as WaitToken;
  expect((await listEventWaiters(h.engine.store, "race.shipped", order, { limit: 10 })).waiters).toHaveLength(
    1,
  );
  return { clock, h, id: job.id, token };
}

const secretOf = (token: WaitToken) => new URL(token.url, "http://x").searchParams.get("secret") ?? "";
const ship = (engine: Engine, order: string, data: unknown) =>
  engine.durable.deliverEvent({ name: "race.shipped", match: order, data });

/** The losers are gone while the job still lives: the token answers 409, the event's waiter is gone. */
async function expectLosersCancelled(h: Harness, order: string, token: WaitToken, tokenLost: boolean) {
  if (tokenLost) {
    expect((await tokenView(h.engine, token.id)).status).toBe("cancelled");
    await expect(completeWaitToken(h.engine, token.id, secretOf(token), { ok: true })).rejects.toMatchObject({
      code: "conflict",
    });
  }
  expect((await listEventWaiters(h.engine.store, "race.shipped", order, { limit: 10 })).waiters).toEqual([]);
  expect(await ship(h.engine, order, "late")).toEqual({ resumed: 0 });
}

/** The job waits for its last event; then it ends with the race's winner as recorded. */
async function finish(h: Harness, id: string, order: string) {
  const job = await getJob(h.engine.store, id);
  expect(job?.waiting).toMatchObject({ for: "event", event: "race.after" });
  expect(await h.engine.durable.deliverEvent({ name: "race.after", match: order, data: 1 })).toEqual({
    resumed: 1,
  });
  await runOnce(h);
  const done = await settled(h, id, "done");
  return JSON.parse(done.result ?? "null") as { won: unknown; after: unknown };
}

describe("ctx.waitForAny", () => {
  it("a token wins: its data is returned; the event's waiter is removed; a replay past the timer returns the token", async () => {
    const { clock, h, id, token } = await startRace("r-1");
    const completed = await completeWaitToken(h.engine, token.id, secretOf(token), { ok: true });
    expect(completed.resumed).toBe(true);
    await runOnce(h);
    expect((await getJob(h.engine.store, id))?.steps?.["approve-or-ship"]?.w).toBe("approved");
    await expectLosersCancelled(h, "r-1", token, false);
    // The replay after the timer's end still returns the recorded winner.
    clock.advance(120_000);
    expect((await finish(h, id, "r-1")).won).toEqual({ branch: "approved", data: { ok: true } });
  });

  it("an event wins: the token is cancelled at once (409), before the job runs again", async () => {
    const { h, id, token } = await startRace("r-2");
    expect(await ship(h.engine, "r-2", { carrier: "x" })).toEqual({ resumed: 1 });
    await expectLosersCancelled(h, "r-2", token, true);
    await runOnce(h);
    expect((await finish(h, id, "r-2")).won).toEqual({ branch: "shipped", data: { carrier: "x" } });
  });

  it("the timer wins at its end (the reaper wakes the job): the token answers 409, the waiter is gone", async () => {
    const { clock, h, id, token } = await startRace("r-3");
    expect((await runReaper(h.engine)).promoted).toBe(0);
    clock.advance(61_000);
    expect((await runReaper(h.engine)).promoted).toBe(1);
    await runOnce(h);
    await expectLosersCancelled(h, "r-3", token, true);
    expect((await finish(h, id, "r-3")).won).toEqual({ branch: "give-up" });
  });

  it("a token and an event both come before the job runs again: one winner, the token's; the event resumes nothing", async () => {
    const { h, id, token } = await startRace("r-4");
    expect((await completeWaitToken(h.engine, token.id, secretOf(token), { ok: false })).resumed).toBe(true);
    // The token's resume took the job out of its wait: the event finds nothing to resume.
    expect(await ship(h.engine, "r-4", "too late")).toEqual({ resumed: 0 });
    await runOnce(h);
    const raced = await getJob(h.engine.store, id);
    expect(raced?.steps?.["approve-or-ship"]).toMatchObject({ w: "approved" });
    expect(raced?.steps?.["approve-or-ship"]?.e).toBeUndefined();
    await expectLosersCancelled(h, "r-4", token, false);
    expect((await finish(h, id, "r-4")).won).toEqual({ branch: "approved", data: { ok: false } });
  });

  it("an event kept from before the race (its lookback) wins it as the race's suspend ends", async () => {
    const clock = new OffsetClock();
    const h = await harness.create({ clock, extraKinds: kinds });
    expect(await ship(h.engine, "r-5", "early")).toEqual({ resumed: 0 });
    const { job } = await h.engine.producer.enqueue({ kind: "t-race", payload: { order: "r-5" } });
    await runOnce(h);
    const raced = await getJob(h.engine.store, job.id);
    expect(raced?.waiting).toBeUndefined();
    expect(raced?.steps?.["approve-or-ship"]?.w).toBe("shipped");
    const token = JSON.parse(raced?.steps?.approval?.v ?? "") as WaitToken;
    await runOnce(h);
    await expectLosersCancelled(h, "r-5", token, true);
    expect((await finish(h, job.id, "r-5")).won).toEqual({ branch: "shipped", data: "early" });
  });

  it("a kept event that won a race is not taken again by a later wait of the job on the same pair", async () => {
    const h = await harness.create({ clock: new OffsetClock(), extraKinds: kinds });
    await ship(h.engine, "r-7", "first");
    const { job } = await h.engine.producer.enqueue({ kind: "t-race-then-wait", payload: { order: "r-7" } });
    await runOnce(h);
    await runOnce(h);
    const waiting = await getJob(h.engine.store, job.id);
    expect(waiting?.steps?.["ship-or-not"]?.w).toBe("shipped");
    expect(waiting?.waiting).toMatchObject({ for: "event", event: "race.shipped" });
    expect(await ship(h.engine, "r-7", "second")).toEqual({ resumed: 1 });
    await runOnce(h);
    const done = await settled(h, job.id, "done");
    expect(JSON.parse(done.result ?? "null")).toEqual({
      won: { branch: "shipped", data: "first" },
      again: "second",
    });
  });

  it("cancelling a job in a race deletes its event branch's waiter; its token answers 409", async () => {
    const { h, id, token } = await startRace("r-6");
    await cancelJob(h.engine, id);
    expect((await getJob(h.engine.store, id))?.status).toBe("cancelled");
    expect((await listEventWaiters(h.engine.store, "race.shipped", "r-6", { limit: 10 })).waiters).toEqual(
      [],
    );
    await expect(completeWaitToken(h.engine, token.id, secretOf(token), { ok: true })).rejects.toMatchObject({
      code: "conflict",
    });
  });

  it.each([
    ["one", 'waitForAny "lonely": a race needs at least 2 branches'],
    ["same", 'waitForAny "twins": two branches are named "t"'],
  ])("bad input (%s) ends the job dead at once, naming the call", async (what, message) => {
    const h = await harness.create({ clock: new OffsetClock(), extraKinds: kinds });
    const { job } = await h.engine.producer.enqueue({ kind: "t-race-bad", payload: { what } });
    await runOnce(h);
    const dead = await getJob(h.engine.store, job.id);
    expect(dead?.status).toBe("dead");
    expect(dead?.attempts).toBe(1);
    expect(dead?.lastError).toContain(message);
  });
});
