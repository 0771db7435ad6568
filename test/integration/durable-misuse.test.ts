import { describe, expect, it } from "vitest";
import * as z from "zod";
import { defineUnboundKind } from "../../lib/job/kind.ts";
import { OffsetClock } from "../support/clock.ts";
import { harnessPerTest, settled } from "../support/engine-harness.ts";

/**
 * A durable call the app's code makes wrongly (docs/architecture.md §22) fails the same way on every
 * attempt: the job ends dead on its first attempt, its error naming the step, and the step functions
 * run no more than that one attempt ran them. The kind allows three quick attempts, so a job retried
 * as any failure would be shows three.
 */
const calls = new Map<string, number>();
const called = (key: string) => calls.set(key, (calls.get(key) ?? 0) + 1);

const misuses = ["twice", "negative", "year", "until", "token", "event", "bigint"] as const;

const kinds = [
  defineUnboundKind({
    name: "t-misuse",
    queue: "default",
    payload: z.object({ what: z.enum(misuses), run: z.string() }),
    maxAttempts: 3,
    backoff: { baseSeconds: 1, maxSeconds: 1 },
    timeoutSeconds: 30,
    handler: async ({ what, run }, ctx) => {
      if (what === "twice") {
        await ctx.step("same", () => called(run));
        await ctx.step("same", () => called(run));
      }
      if (what === "negative") await ctx.sleep("nap", -1);
      if (what === "year") await ctx.sleep("nap", 366 * 86_400);
      if (what === "until") await ctx.sleepUntil("later", new Date(Number.NaN));
      if (what === "token") await ctx.createToken("approval", { timeoutSeconds: 0 });
      if (what === "event")
        await ctx.waitForEvent("paid", { event: "order.paid", match: "o1", timeoutSeconds: 0 });
      if (what === "bigint")
        await ctx.step("count", () => {
          called(run);
          return 1n;
        });
      return null;
    },
  }),
];

const harness = harnessPerTest();

describe("durable misuse", () => {
  it.each([
    ["twice", 'step "same" is used twice in one run'],
    ["negative", 'sleep "nap": -1 s is outside'],
    ["year", 'sleep "nap": 31622400 s is outside'],
    ["until", 'sleepUntil "later": not a date within 365 days'],
    ["token", 'token "approval": timeoutSeconds must be within'],
    ["event", 'waitForEvent "paid": timeoutSeconds must be within'],
    ["bigint", 'step "count" returned a value JSON can\'t hold'],
  ] as const)("%s: dead on the first attempt, naming the step", async (what, message) => {
    const clock = new OffsetClock();
    const h = await harness.create({ clock, extraKinds: kinds });
    h.startPoller();
    const run = `${what}-${Date.now()}`;
    const { job } = await h.engine.producer.enqueue({ kind: "t-misuse", payload: { what, run } });
    const dead = await settled(h, job.id, "dead");
    expect(dead.lastError).toContain(message);
    expect(dead.attempts).toBe(1);
    expect(calls.get(run) ?? 0).toBeLessThanOrEqual(1);
  });
});
