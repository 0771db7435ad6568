import { describe, expect, it } from "vitest";
import * as z from "zod";
import type { JournalLimits } from "../../lib/job/journal-bounds.ts";
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

const misuses = ["twice", "negative", "year", "until", "token", "event", "bigint", "version"] as const;

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
      if (what === "version") await ctx.version("pricing", [2, 1]);
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
    ["version", 'version "pricing": the range must be [from, to], whole numbers 0 <= from <= to'],
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

/**
 * A job's journal is bounded (JOURNAL_LIMITS: 1 000 records, 128 KiB of names), so its item stays
 * under DynamoDB's 400 KB (test/unit/journal-limits.test.ts sizes the worst case): a job past either
 * ends dead on its first attempt, naming the step, with every record before it kept, instead of a
 * write refused for size on every later attempt. Played here at a smaller size (40 records, 4 KiB
 * of names), the same code path: a thousand writes to one growing item took minutes on a loaded CI.
 */
const limits: JournalLimits = { steps: 40, nameBytes: 4096 };
const journalKinds = [
  defineUnboundKind({
    name: "t-journal",
    queue: "default",
    payload: z.object({ steps: z.number().int(), wide: z.boolean() }),
    maxAttempts: 3,
    backoff: { baseSeconds: 1, maxSeconds: 1 },
    timeoutSeconds: 120,
    handler: async ({ steps, wide }, ctx) => {
      // One ASCII digit and 255 characters of 3 UTF-8 bytes each: 766 bytes a name.
      const name = (i: number) => (wide ? `${i}`.padEnd(256, "界") : `s${i}`);
      for (let i = 0; i < steps; i++) await ctx.step(name(i), () => undefined);
      return { steps };
    },
  }),
];

describe("a job's journal", () => {
  it.each([
    ["41 short names", { steps: 41, wide: false }, "a job records at most 40 steps", 40],
    // 5 names of 766 bytes are 3 830; a sixth would make 4 596.
    ["wide names past 4 KiB", { steps: 9, wide: true }, "names come to at most 4096 bytes", 5],
  ] as const)("%s: dead on the first attempt at the cap", async (_, payload, message, kept) => {
    const h = await harness.create({
      clock: new OffsetClock(),
      extraKinds: journalKinds,
      journalLimits: limits,
    });
    h.startPoller();
    const { job } = await h.engine.producer.enqueue({ kind: "t-journal", payload });
    const dead = await settled(h, job.id, "dead");
    expect(dead.lastError).toContain(message);
    expect(dead.attempts).toBe(1);
    expect(Object.keys(dead.steps ?? {})).toHaveLength(kept);
  });

  it("a job of 40 steps, the cap, completes", async () => {
    const h = await harness.create({
      clock: new OffsetClock(),
      extraKinds: journalKinds,
      journalLimits: limits,
    });
    h.startPoller();
    const { job } = await h.engine.producer.enqueue({
      kind: "t-journal",
      payload: { steps: 40, wide: false },
    });
    const done = await settled(h, job.id, "done");
    expect(Object.keys(done.steps ?? {})).toHaveLength(40);
  });
});
