import { describe, expect, it } from "vitest";
import * as z from "zod";
import { deliverEvent } from "../../lib/durable/deliver-event.ts";
import { completeWaitToken, tokenView } from "../../lib/durable/durable-tokens.ts";
import { TokenTimeoutError } from "../../lib/durable-errors.ts";
import { ClientError } from "../../lib/errors.ts";
import type { WaitToken } from "../../lib/job/durable.ts";
import { defineUnboundKind } from "../../lib/job/kind.ts";
import { cancelJob } from "../../lib/ops/cancel-job.ts";
import { runReaper } from "../../lib/ops/reaper.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import { toStepViews } from "../../lib/store/step-record.ts";
import { OffsetClock } from "../support/clock.ts";
import { codeBlocks, httpRequestOf } from "../support/doc-blocks.ts";
import { harnessPerTest, settled } from "../support/engine-harness.ts";
import { waitFor } from "../support/wait.ts";

/**
 * Durable steps, sleeps and waits (docs/architecture.md §22) on the real emulators: each step's
 * function runs once per job whatever happens between steps, a waiting job holds nothing, and a
 * token or an event resumes it. The clock is moved for timeouts; SQS's own delays (a 1 s sleep's
 * wake-up) are the only real waits.
 */
const journal: string[] = [];
const Input = z.object({ user: z.string(), failOnce: z.boolean().optional(), big: z.boolean().optional() });

const kinds = [
  defineUnboundKind({
    name: "t-steps",
    queue: "default",
    payload: Input,
    maxAttempts: 3,
    timeoutSeconds: 30,
    handler: async (p, ctx) => {
      const a = await ctx.step("a", async () => {
        journal.push(`${p.user}:a`);
        return { at: new Date(0), big: p.big ? "x".repeat(20_000) : "" };
      });
      if (p.failOnce && ctx.attempt === 1) throw new Error("after a, before b");
      await ctx.sleep("nap", 1);
      const b = await ctx.step("b", () => {
        journal.push(`${p.user}:b`);
        return 2;
      });
      return { a: a.at, bigBytes: a.big.length, b };
    },
  }),
  defineUnboundKind({
    name: "t-approve",
    queue: "default",
    payload: Input,
    maxAttempts: 3,
    timeoutSeconds: 30,
    handler: async (p, ctx) => {
      const token = await ctx.createToken("approval", { timeoutSeconds: 60 });
      journal.push(`${p.user}:token:${token.id}`);
      try {
        const data = await ctx.waitForToken(token, { schema: z.object({ ok: z.boolean() }) });
        return { data };
      } catch (err) {
        if (err instanceof TokenTimeoutError) return { timedOut: err.step };
        throw err;
      }
    },
  }),
  defineUnboundKind({
    name: "t-order",
    queue: "default",
    payload: z.object({ order: z.string() }),
    maxAttempts: 3,
    timeoutSeconds: 30,
    handler: async ({ order }, ctx) => ({
      order,
      paid: await ctx.waitForEvent("paid", { event: "order.paid", match: order, timeoutSeconds: 600 }),
    }),
  }),
  defineUnboundKind({
    name: "t-side-by-side",
    queue: "default",
    payload: z.object({ user: z.string() }),
    maxAttempts: 3,
    timeoutSeconds: 30,
    handler: async ({ user }, ctx) => {
      const [x, y] = await Promise.all([
        ctx.step("x", async () => journal.push(`${user}:x`)),
        ctx.step("y", async () => journal.push(`${user}:y`)),
      ]);
      return { x: typeof x, y: typeof y };
    },
  }),
  defineUnboundKind({
    name: "t-zero-sleep",
    queue: "default",
    payload: z.object({}),
    maxAttempts: 3,
    timeoutSeconds: 30,
    handler: async (_p, ctx) => {
      await ctx.sleep("none", 0);
      return ctx.step("after", () => "went on");
    },
  }),
  defineUnboundKind({
    name: "t-long-sleep",
    queue: "default",
    payload: z.object({}),
    maxAttempts: 3,
    timeoutSeconds: 30,
    handler: async (_p, ctx) => {
      await ctx.sleep("long", 20 * 60);
      return ctx.step("after", () => "woke");
    },
  }),
  defineUnboundKind({
    name: "t-bad-step",
    queue: "default",
    payload: z.object({ what: z.enum(["empty", "long", "negative", "year", "twice"]) }),
    maxAttempts: 1,
    timeoutSeconds: 30,
    handler: async ({ what }, ctx) => {
      if (what === "empty") await ctx.step("", async () => 1);
      if (what === "long") await ctx.step("n".repeat(257), async () => 1);
      if (what === "negative") await ctx.sleep("nap", -1);
      if (what === "year") await ctx.sleep("nap", 366 * 86_400);
      if (what === "twice") {
        await ctx.step("same", async () => 1);
        await ctx.step("same", async () => 2);
      }
      return null;
    },
  }),
];

const harness = harnessPerTest();
const tokenOf = (url: string) => new URL(url, "http://x").searchParams.get("secret") ?? "";

describe("durable steps", () => {
  it("a step runs once across a failed attempt and a sleep; the steps list in order", async () => {
    const clock = new OffsetClock();
    const h = await harness.create({ clock, extraKinds: kinds });
    h.startPoller();
    const { job } = await h.engine.producer.enqueue({
      kind: "t-steps",
      payload: { user: "u1", failOnce: true, big: true },
    });
    const sleeping = await waitFor(async () => {
      const item = await getJob(h.engine.store, job.id);
      return item?.waiting ? item : undefined;
    }, "the job to sleep");
    expect(sleeping.status).toBe("scheduled");
    expect(sleeping.waiting?.for).toBe("sleep");
    const done = await settled(h, job.id, "done");
    expect(JSON.parse(done.result ?? "")).toEqual({ a: "1970-01-01T00:00:00.000Z", bigBytes: 20_000, b: 2 });
    expect(journal.filter((l) => l.startsWith("u1:"))).toEqual(["u1:a", "u1:b"]);
    // A step result over 8 KiB lives in the claims bucket; the item keeps its key.
    expect(done.steps?.a?.o).toMatch(/^claims\/\d+d\/.+\/step-/);
    const steps = toStepViews(done.steps, clock.now());
    expect(steps.map((s) => [s.name, s.type, s.status, s.attempt])).toEqual([
      ["a", "step", "done", 1],
      ["nap", "sleep", "done", 2],
      ["b", "step", "done", 2],
    ]);
    // The failed attempt spent one; the sleep gave its run's back.
    expect(done.attempts).toBe(2);
  });

  it("a sleep of 0 goes on in the same run, however the clock moves between its reads", async () => {
    // A clock a millisecond later at every read: a sleep that read it twice would wait that one.
    const clock = new (class extends OffsetClock {
      override now(): number {
        this.advance(1);
        return super.now();
      }
    })();
    const h = await harness.create({ clock, extraKinds: kinds });
    h.startPoller();
    const { job } = await h.engine.producer.enqueue({ kind: "t-zero-sleep", payload: {} });
    const done = await settled(h, job.id, "done");
    // One run: none ended suspended (a 1 ms sleep would have, and a second run finished the job).
    expect((done.history ?? []).map((run) => run.o)).not.toContain("suspend");
    const steps = toStepViews(done.steps, clock.now());
    expect(steps.map((s) => [s.name, s.type, s.status, s.attempt])).toEqual([
      ["none", "sleep", "done", 1],
      ["after", "step", "done", 1],
    ]);
    expect(done.attempts).toBe(1);
  });

  it("two steps side by side, the job's first: both recorded in the one run", async () => {
    const clock = new OffsetClock();
    const h = await harness.create({ clock, extraKinds: kinds });
    h.startPoller();
    const { job } = await h.engine.producer.enqueue({ kind: "t-side-by-side", payload: { user: "u6" } });
    const done = await settled(h, job.id, "done");
    expect(done.attempts).toBe(1);
    expect(Object.keys(done.steps ?? {}).sort()).toEqual(["x", "y"]);
    expect(journal.filter((l) => l.startsWith("u6:")).sort()).toEqual(["u6:x", "u6:y"]);
  });

  it("a sleep past SQS's 15 minutes waits in the scheduled index; the reaper wakes it at its end", async () => {
    const clock = new OffsetClock();
    const h = await harness.create({ clock, extraKinds: kinds });
    h.startPoller();
    const { job } = await h.engine.producer.enqueue({ kind: "t-long-sleep", payload: {} });
    const asleep = await waitFor(async () => {
      const item = await getJob(h.engine.store, job.id);
      return item?.waiting ? item : undefined;
    }, "the sleep");
    expect(asleep.gsi1pk).toMatch(/#scheduled#/);
    expect(asleep.promotingUntil).toBeUndefined();
    // Nothing is sent for it until the reaper's horizon reaches its end.
    expect((await runReaper(h.engine)).promoted).toBe(0);
    clock.advance(20 * 60 * 1000);
    expect((await runReaper(h.engine)).promoted).toBe(1);
    const done = await settled(h, job.id, "done");
    expect(JSON.parse(done.result ?? "")).toBe("woke");
  });

  it("a token: wrong secret 403 and nothing written; completed once, 409 after; the job ends with its data", async () => {
    const clock = new OffsetClock();
    const h = await harness.create({ clock, extraKinds: kinds });
    h.startPoller();
    const { job } = await h.engine.producer.enqueue({ kind: "t-approve", payload: { user: "u2" } });
    const waiting = await waitFor(async () => {
      const item = await getJob(h.engine.store, job.id);
      return item?.status === "scheduled" && item.waiting?.for === "token" ? item : undefined;
    }, "the job to wait for its token");
    const token = JSON.parse(waiting.steps?.approval?.v ?? "") as WaitToken;
    expect(waiting.waiting?.token).toBe(token.id);
    expect((await tokenView(h.engine, token.id)).status).toBe("pending");
    // The reaper leaves a wait due within its horizon alone until its timeout: the token can still resume it.
    expect((await runReaper(h.engine)).promoted).toBe(0);
    expect((await getJob(h.engine.store, job.id))?.waiting?.for).toBe("token");
    await expect(completeWaitToken(h.engine, token.id, "wrong", { ok: true })).rejects.toMatchObject({
      code: "forbidden",
    });
    await expect(completeWaitToken(h.engine, "tok_nope", tokenOf(token.url), {})).rejects.toMatchObject({
      code: "not_found",
    });
    expect((await tokenView(h.engine, token.id)).status).toBe("pending");
    const answer = await completeWaitToken(h.engine, token.id, tokenOf(token.url), { ok: true });
    expect(answer).toEqual({ id: token.id, jobId: job.id, status: "completed", resumed: true });
    await expect(
      completeWaitToken(h.engine, token.id, tokenOf(token.url), { ok: false }),
    ).rejects.toMatchObject({ code: "conflict" });
    const done = await settled(h, job.id, "done");
    expect(JSON.parse(done.result ?? "")).toEqual({ data: { ok: true } });
    // One token made: the rerun after the wait got the recorded one back.
    expect(journal.filter((l) => l.startsWith("u2:token:"))).toEqual([
      `u2:token:${token.id}`,
      `u2:token:${token.id}`,
    ]);
    expect((await tokenView(h.engine, token.id)).data).toEqual({ ok: true });
  });

  it("a token's timeout throws TokenTimeoutError into the handler, which may catch it", async () => {
    const clock = new OffsetClock();
    const h = await harness.create({ clock, extraKinds: kinds });
    h.startPoller();
    const { job } = await h.engine.producer.enqueue({ kind: "t-approve", payload: { user: "u3" } });
    await waitFor(async () => (await getJob(h.engine.store, job.id))?.waiting?.for === "token", "the wait");
    clock.advance(61_000);
    await runReaper(h.engine);
    const done = await settled(h, job.id, "done");
    expect(JSON.parse(done.result ?? "")).toEqual({ timedOut: "approval" });
  });

  it("cancelling a waiting job ends it at once; its token then answers 409", async () => {
    const clock = new OffsetClock();
    const h = await harness.create({ clock, extraKinds: kinds });
    h.startPoller();
    const { job } = await h.engine.producer.enqueue({ kind: "t-approve", payload: { user: "u4" } });
    const waiting = await waitFor(async () => {
      const item = await getJob(h.engine.store, job.id);
      return item?.waiting?.for === "token" ? item : undefined;
    }, "the wait");
    await cancelJob(h.engine, job.id);
    expect((await getJob(h.engine.store, job.id))?.status).toBe("cancelled");
    const token = JSON.parse(waiting.steps?.approval?.v ?? "") as WaitToken;
    expect((await tokenView(h.engine, token.id)).status).toBe("cancelled");
    await expect(completeWaitToken(h.engine, token.id, tokenOf(token.url), {})).rejects.toMatchObject({
      code: "conflict",
    });
    expect((await tokenView(h.engine, token.id)).status).toBe("cancelled");
  });

  it("an event resumes the jobs waiting for its name and match, and only those", async () => {
    const clock = new OffsetClock();
    const h = await harness.create({ clock, extraKinds: kinds });
    h.startPoller();
    const a = (await h.engine.producer.enqueue({ kind: "t-order", payload: { order: "o-1" } })).job;
    const b = (await h.engine.producer.enqueue({ kind: "t-order", payload: { order: "o-2" } })).job;
    for (const id of [a.id, b.id])
      await waitFor(async () => (await getJob(h.engine.store, id))?.waiting?.for === "event", "the waits");
    expect(await deliverEvent(h.engine, { name: "order.paid", match: "o-9", data: 1 })).toEqual({
      resumed: 0,
    });
    expect(await deliverEvent(h.engine, { name: "order.paid", match: "o-1", data: { amount: 5 } })).toEqual({
      resumed: 1,
    });
    const done = await settled(h, a.id, "done");
    expect(JSON.parse(done.result ?? "")).toEqual({ order: "o-1", paid: { amount: 5 } });
    expect((await getJob(h.engine.store, b.id))?.waiting?.match).toBe("o-2");
    // The same event again finds no waiter: the resumed job's pointer is gone.
    expect(await deliverEvent(h.engine, { name: "order.paid", match: "o-1", data: 2 })).toEqual({
      resumed: 0,
    });
    await expect(deliverEvent(h.engine, { name: "order.paid" })).rejects.toBeInstanceOf(ClientError);
  });

  it("docs/guide/durable-jobs.md's event resumes the job waiting for its order", async () => {
    const clock = new OffsetClock();
    const h = await harness.create({ clock, extraKinds: kinds });
    h.startPoller();
    const event = codeBlocks("docs/guide/durable-jobs.md", "http")
      .map(httpRequestOf)
      .find((r) => r.path === "/events");
    const body = event?.body as { match: string; data: unknown };
    const { job } = await h.engine.producer.enqueue({ kind: "t-order", payload: { order: body.match } });
    await waitFor(async () => (await getJob(h.engine.store, job.id))?.waiting?.for === "event", "the wait");
    expect(await deliverEvent(h.engine, body)).toEqual({ resumed: 1 });
    const done = await settled(h, job.id, "done");
    expect(JSON.parse(done.result ?? "")).toEqual({ order: body.match, paid: body.data });
  });

  it.each([
    ["empty", "a step name must be a non-empty string"],
    ["long", "is over 256 characters"],
    ["negative", 'sleep "nap": -1 s is outside'],
    ["year", 'sleep "nap": 31622400 s is outside'],
    ["twice", 'step "same" is used twice in one run'],
  ])("a bad step (%s) ends the job dead, naming it", async (what, message) => {
    const clock = new OffsetClock();
    const h = await harness.create({ clock, extraKinds: kinds });
    h.startPoller();
    const { job } = await h.engine.producer.enqueue({ kind: "t-bad-step", payload: { what } });
    const dead = await settled(h, job.id, "dead");
    expect(dead.lastError).toContain(message);
    expect(dead.waiting).toBeUndefined();
  });
});
