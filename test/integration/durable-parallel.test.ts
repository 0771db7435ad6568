import { describe, expect, it } from "vitest";
import * as z from "zod";
import { defineUnboundKind } from "../../lib/job/kind.ts";
import { OffsetClock } from "../support/clock.ts";
import { harnessPerTest, settled } from "../support/engine-harness.ts";

/**
 * Parallel steps (`ctx.parallel`, `ctx.map`; docs/architecture.md §22): steps side by side under a
 * limit, each recorded once as `<call>[<index>]`, results in input order; a replay runs only the
 * steps not recorded. On the real emulators; the sleeps' and retries' 1 s SQS delays are the only
 * real waits. Each step function counts its calls per run and index, and how many of its run's
 * steps were inside a function at once.
 */
const calls = new Map<string, number>();
const callsOf = (run: string, n: number) =>
  Array.from({ length: n }, (_, i) => calls.get(`${run}:${i}`) ?? 0);
const inside = new Map<string, { now: number; max: number }>();
/** Each run's step functions' starts and ends, in order: `+3`, `-3`. */
const events = new Map<string, string[]>();
const log = (run: string, event: string) => events.set(run, [...(events.get(run) ?? []), event]);

/** One step function's call: counted, held for `turns` turns of the event loop (never the clock). */
async function work<T>(run: string, index: number, turns: number, value: T): Promise<T> {
  calls.set(`${run}:${index}`, (calls.get(`${run}:${index}`) ?? 0) + 1);
  const seen = inside.get(run) ?? { now: 0, max: 0 };
  inside.set(run, seen);
  seen.now += 1;
  seen.max = Math.max(seen.max, seen.now);
  log(run, `+${index}`);
  for (let t = 0; t < turns; t++) await new Promise((resolve) => setImmediate(resolve));
  log(run, `-${index}`);
  seen.now -= 1;
  return value;
}

const misuses = ["zero", "over100", "fraction", "items", "array", "fns", "fn", "bigint"] as const;

const kinds = [
  defineUnboundKind({
    name: "t-map-order",
    queue: "default",
    payload: z.object({ run: z.string(), n: z.number(), concurrency: z.number().optional() }),
    maxAttempts: 1,
    timeoutSeconds: 60,
    handler: async ({ run, n, concurrency }, ctx) => {
      const items = Array.from({ length: n }, (_, i) => i);
      // The first items are held longest, so they end last: the results keep the input's order.
      const options = concurrency === undefined ? undefined : { concurrency };
      return ctx.map("m", items, (i) => work(run, i, 4 * (n - i), i * 10), options);
    },
  }),
  defineUnboundKind({
    name: "t-parallel-mixed",
    queue: "default",
    payload: z.object({ run: z.string() }),
    maxAttempts: 1,
    timeoutSeconds: 60,
    handler: async ({ run }, ctx) => {
      const [a, b, c] = await ctx.parallel(
        "p",
        [() => work(run, 0, 12, "a"), () => work(run, 1, 6, 2), () => work(run, 2, 2, { c: true })],
        { concurrency: 2 },
      );
      return { a, b, c };
    },
  }),
  defineUnboundKind({
    name: "t-map-sleep",
    queue: "default",
    payload: z.object({ run: z.string(), beside: z.boolean() }),
    maxAttempts: 1,
    timeoutSeconds: 60,
    handler: async ({ run, beside }, ctx) => {
      const items = [0, 1, 2, 3, 4, 5];
      const map = () => ctx.map("m", items, (i) => work(run, i, 3, `r${i}`), { concurrency: 2 });
      if (beside) {
        const [, results] = await Promise.all([ctx.sleep("nap", 1), map()]);
        return results;
      }
      const results = await map();
      await ctx.sleep("nap", 1);
      const after = await ctx.parallel("p", [() => work(run, 10, 1, "late")]);
      return [...results, ...after];
    },
  }),
  defineUnboundKind({
    name: "t-map-fail",
    queue: "default",
    payload: z.object({ run: z.string(), failAt: z.number(), always: z.boolean() }),
    maxAttempts: 2,
    backoff: { baseSeconds: 1, maxSeconds: 1 },
    timeoutSeconds: 60,
    handler: async ({ run, failAt, always }, ctx) =>
      ctx.map(
        "m",
        [0, 1, 2, 3, 4],
        async (i) => {
          const value = await work(run, i, 2, i);
          if (i === failAt && (always || calls.get(`${run}:${i}`) === 1)) throw new Error(`boom at ${i}`);
          return value;
        },
        { concurrency: 3 },
      ),
  }),
  defineUnboundKind({
    name: "t-parallel-misuse",
    queue: "default",
    payload: z.object({ what: z.enum(misuses), run: z.string() }),
    maxAttempts: 3,
    backoff: { baseSeconds: 1, maxSeconds: 1 },
    timeoutSeconds: 30,
    handler: async ({ what, run }, ctx) => {
      const step = (i: number) => work(run, i, 0, i);
      if (what === "zero") await ctx.map("m", [1], step, { concurrency: 0 });
      if (what === "over100") await ctx.map("m", [1], step, { concurrency: 101 });
      if (what === "fraction") await ctx.parallel("p", [() => step(0)], { concurrency: 1.5 });
      if (what === "items")
        await ctx.map(
          "m",
          Array.from({ length: 1001 }, (_, i) => i),
          step,
        );
      if (what === "array") await ctx.map("m", "abc" as unknown as string[], () => step(0));
      if (what === "fns") await ctx.parallel("p", [() => step(0), "x" as unknown as () => number]);
      if (what === "fn") await ctx.map("m", [1], undefined as unknown as () => number);
      if (what === "bigint") await ctx.map("m", [0, 1], async (i) => (i === 1 ? 1n : step(i)));
      return null;
    },
  }),
];

const harness = harnessPerTest();

async function start(kind: string, payload: Record<string, unknown>) {
  const h = await harness.create({ clock: new OffsetClock(), extraKinds: kinds });
  h.startPoller();
  const { job } = await h.engine.producer.enqueue({ kind, payload });
  return { h, id: job.id };
}

describe("ctx.map and ctx.parallel", () => {
  it("map: results in input order, at most `concurrency` steps at once, each recorded once", async () => {
    const run = `order-${Date.now()}`;
    const { h, id } = await start("t-map-order", { run, n: 12, concurrency: 3 });
    const done = await settled(h, id, "done");
    expect(JSON.parse(done.result ?? "")).toEqual(Array.from({ length: 12 }, (_, i) => i * 10));
    expect(inside.get(run)?.max).toBe(3);
    expect(callsOf(run, 12)).toEqual(Array(12).fill(1));
    // The job's first record writes its steps map: that step ran alone, the others after it.
    expect(events.get(run)?.slice(0, 3)).toEqual(["+0", "-0", "+1"]);
    expect(Object.keys(done.steps ?? {}).sort()).toEqual(
      Array.from({ length: 12 }, (_, i) => `m[${i}]`).sort(),
    );
  });

  it("map: 10 at once when no concurrency is given", async () => {
    const run = `default-${Date.now()}`;
    const { h, id } = await start("t-map-order", { run, n: 14 });
    await settled(h, id, "done");
    expect(inside.get(run)?.max).toBe(10);
  });

  it("parallel: each function's result in the order of the functions, typed", async () => {
    const run = `mixed-${Date.now()}`;
    const { h, id } = await start("t-parallel-mixed", { run });
    const done = await settled(h, id, "done");
    expect(JSON.parse(done.result ?? "")).toEqual({ a: "a", b: 2, c: { c: true } });
    expect(inside.get(run)?.max).toBe(2);
    expect(Object.keys(done.steps ?? {}).sort()).toEqual(["p[0]", "p[1]", "p[2]"]);
  });

  it("a replay after a sleep returns the recorded steps without running them", async () => {
    const run = `replay-${Date.now()}`;
    const { h, id } = await start("t-map-sleep", { run, beside: false });
    const done = await settled(h, id, "done");
    expect(JSON.parse(done.result ?? "")).toEqual(["r0", "r1", "r2", "r3", "r4", "r5", "late"]);
    expect(callsOf(run, 6)).toEqual([1, 1, 1, 1, 1, 1]);
    expect(calls.get(`${run}:10`)).toBe(1);
  });

  it("a sleep beside a map: the suspend waits for the steps in flight, each function runs once", async () => {
    const run = `beside-${Date.now()}`;
    const { h, id } = await start("t-map-sleep", { run, beside: true });
    const done = await settled(h, id, "done");
    expect(JSON.parse(done.result ?? "")).toEqual(["r0", "r1", "r2", "r3", "r4", "r5"]);
    expect(callsOf(run, 6)).toEqual([1, 1, 1, 1, 1, 1]);
    expect(Object.keys(done.steps ?? {})).toHaveLength(7);
  });
});

describe("a failing parallel step", () => {
  it("fails the call after the others settle; the retry runs only the failed one", async () => {
    const run = `retry-${Date.now()}`;
    const { h, id } = await start("t-map-fail", { run, failAt: 1, always: false });
    const done = await settled(h, id, "done");
    expect(done.attempts).toBe(2);
    expect(JSON.parse(done.result ?? "")).toEqual([0, 1, 2, 3, 4]);
    expect(callsOf(run, 5)).toEqual([1, 2, 1, 1, 1]);
  });

  it("the error names the call and the failed step, with the step's error", async () => {
    const run = `dead-${Date.now()}`;
    const { h, id } = await start("t-map-fail", { run, failAt: 3, always: true });
    const dead = await settled(h, id, "dead");
    expect(dead.lastError).toBe('map "m": step 3 failed: boom at 3');
    expect(callsOf(run, 5)).toEqual([1, 1, 1, 2, 1]);
    expect(Object.keys(dead.steps ?? {}).sort()).toEqual(["m[0]", "m[1]", "m[2]", "m[4]"]);
  });
});

describe("parallel misuse", () => {
  it.each([
    ["zero", 'map "m": concurrency 0 is outside 1..100'],
    ["over100", 'map "m": concurrency 101 is outside 1..100'],
    ["fraction", 'parallel "p": concurrency 1.5 is outside 1..100'],
    ["items", 'map "m": 1001 items is over 1000'],
    ["array", 'map "m": items must be an array'],
    ["fns", 'parallel "p": fns[1] is not a function'],
    ["fn", 'map "m": its step function must be a function'],
    ["bigint", 'map "m": step 1 failed: step "m[1]" returned a value JSON can\'t hold'],
  ] as const)("%s: dead on the first attempt, naming the call", async (what, message) => {
    const run = `misuse-${what}-${Date.now()}`;
    const { h, id } = await start("t-parallel-misuse", { what, run });
    const dead = await settled(h, id, "dead");
    expect(dead.lastError).toContain(message);
    expect(dead.attempts).toBe(1);
  });
});
