import { DeleteObjectCommand } from "@aws-sdk/client-s3";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { keptDays } from "../../lib/claims/claim-keys.ts";
import { getClaim } from "../../lib/claims/claim-store.ts";
import { deliverEvent } from "../../lib/durable/deliver-event.ts";
import { defineUnboundKind } from "../../lib/job/kind.ts";
import { runReaper } from "../../lib/ops/reaper.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import { OffsetClock } from "../support/clock.ts";
import { harnessPerTest, settled } from "../support/engine-harness.ts";
import { waitFor } from "../support/wait.ts";

/**
 * How long a durable job's step and event objects live (docs/architecture.md §22, "Retention"): the
 * job's remaining wait, a week of running after it, and its queue's longest retention, not a year
 * and a half whatever the queue keeps. Here the queue keeps done jobs 1 day and dead ones 3: an
 * object written while the job runs takes the 12-day class (3 + 7 days, and claimKey's day of
 * margin), and a job that then sleeps 30 days has its objects moved to a class that covers the
 * sleep, in the suspend's own write. An object gone anyway (an operator's retention, a job paused
 * for months) ends the job dead, naming the step, instead of replaying its result as nothing.
 */
const DAY = 86_400_000;
const big = () => "x".repeat(20_000);

const kinds = [
  defineUnboundKind({
    name: "t-keep-short",
    queue: "default",
    payload: z.object({}),
    maxAttempts: 1,
    timeoutSeconds: 30,
    handler: async (_p, ctx) => (await ctx.step("big", big)).length,
  }),
  defineUnboundKind({
    name: "t-keep-sleep",
    queue: "default",
    payload: z.object({ days: z.number() }),
    maxAttempts: 1,
    timeoutSeconds: 30,
    handler: async ({ days }, ctx) => {
      const value = await ctx.step("big", big);
      await ctx.sleep("long", days * 86_400);
      return { bigBytes: value.length, after: await ctx.step("after", () => "woke") };
    },
  }),
  defineUnboundKind({
    name: "t-keep-event",
    queue: "default",
    payload: z.object({ order: z.string() }),
    maxAttempts: 1,
    timeoutSeconds: 30,
    handler: async ({ order }, ctx) => {
      const data = await ctx.waitForEvent("paid", { event: "order.paid", match: order, timeoutSeconds: 600 });
      return (data as string).length;
    },
  }),
];

const harness = harnessPerTest();
const create = (clock: OffsetClock) =>
  harness.create({ clock, extraKinds: kinds, queue: { retentionDays: { done: 1, dead: 3 } } });

async function suspended(h: Awaited<ReturnType<typeof create>>, id: string) {
  return waitFor(async () => {
    const item = await getJob(h.engine.store, id);
    return item?.status === "scheduled" && item.waiting ? item : undefined;
  }, "the job to wait");
}

describe("durable objects live as long as their job may need them", () => {
  it("a step's object written while the job runs takes its queue's retention plus a week, not 545 days", async () => {
    const clock = new OffsetClock();
    const h = await create(clock);
    h.startPoller();
    const { job } = await h.engine.producer.enqueue({ kind: "t-keep-short", payload: {} });
    const done = await settled(h, job.id, "done");
    expect(keptDays(done.steps?.big?.o ?? "")).toBe(12);
  });

  it("a sleep past the objects' class moves them to one that covers it, in the suspend's write; the replay reads them", async () => {
    const clock = new OffsetClock();
    const h = await create(clock);
    h.startPoller();
    const { job } = await h.engine.producer.enqueue({ kind: "t-keep-sleep", payload: { days: 30 } });
    const asleep = await suspended(h, job.id);
    // 30 days of sleep, a week of running and 3 days of retention: 40, and a day's margin, class 45.
    const key = asleep.steps?.big?.o ?? "";
    expect(keptDays(key)).toBe(45);
    expect(key).toMatch(new RegExp(`^claims/45d/${job.id}/step-`));
    expect(await getClaim(h.engine.claims, key)).toBe(JSON.stringify(big()));
    clock.advance(30 * DAY);
    expect((await runReaper(h.engine)).promoted).toBe(1);
    const done = await settled(h, job.id, "done");
    expect(JSON.parse(done.result ?? "")).toEqual({ bigBytes: 20_000, after: "woke" });
    // Read back, not moved again: the object already covers what is left.
    expect(done.steps?.big?.o).toBe(key);
  });

  it("a short sleep the object's class already covers moves nothing", async () => {
    const clock = new OffsetClock();
    const h = await create(clock);
    h.startPoller();
    const { job } = await h.engine.producer.enqueue({ kind: "t-keep-sleep", payload: { days: 1 } });
    const asleep = await suspended(h, job.id);
    // 1 + 7 + 3 days: the 12-day class the step was written under still covers it.
    expect(keptDays(asleep.steps?.big?.o ?? "")).toBe(12);
  });

  it("an event's data over 8 KiB takes its queue's retention plus a week", async () => {
    const clock = new OffsetClock();
    const h = await create(clock);
    h.startPoller();
    const { job } = await h.engine.producer.enqueue({ kind: "t-keep-event", payload: { order: "o-1" } });
    await suspended(h, job.id);
    expect(await deliverEvent(h.engine, { name: "order.paid", match: "o-1", data: big() })).toEqual({
      resumed: 1,
    });
    const done = await settled(h, job.id, "done");
    expect(JSON.parse(done.result ?? "")).toBe(20_000);
    expect(keptDays(done.steps?.paid?.o ?? "")).toBe(12);
  });

  it("a replay whose step object is gone ends the job dead, naming the step", async () => {
    const clock = new OffsetClock();
    const h = await create(clock);
    h.startPoller();
    const { job } = await h.engine.producer.enqueue({ kind: "t-keep-sleep", payload: { days: 1 } });
    const asleep = await suspended(h, job.id);
    // As S3's lifecycle would have it, had the job waited longer than its class.
    const key = asleep.steps?.big?.o ?? "";
    await h.engine.claims.s3.send(new DeleteObjectCommand({ Bucket: h.engine.claims.bucket, Key: key }));
    clock.advance(DAY);
    expect((await runReaper(h.engine)).promoted).toBe(1);
    const dead = await settled(h, job.id, "dead");
    expect(dead.lastError).toMatch(/^step "big": its result has expired \(kept 12 days\)/);
  });
});
