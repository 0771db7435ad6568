import { describe, expect, it } from "vitest";
import { type BatchPolicy, KeyBatches } from "../../lib/batching/key-batches.ts";
import { ManualTimers } from "../support/manual-timers.ts";
import { deferred } from "../support/wait.ts";

/** A KeyBatches whose calls stay open until the test ends them, recording what each call took. */
function harness(policy: BatchPolicy, limits = { maxSize: 3, maxWaitSeconds: 2, maxKeyConcurrency: 1 }) {
  const timers = new ManualTimers();
  const calls: { key: string; items: number[]; at: number; end: () => void }[] = [];
  const batches = new KeyBatches<number>({
    policy,
    limits,
    timers,
    run: (key, items) => {
      const done = deferred();
      calls.push({ key, items, at: timers.now, end: () => done.resolve() });
      return done.promise;
    },
  });
  const settle = () => new Promise((r) => setImmediate(r));
  return { timers, calls, batches, settle };
}

describe("KeyBatches policies (a manual clock)", () => {
  it("immediate: each item goes as soon as its key has capacity; what waits goes together after", async () => {
    const { calls, batches, settle } = harness("immediate");
    batches.add("a", 1);
    batches.add("a", 2);
    batches.add("a", 3);
    batches.add("b", 9);
    expect(calls.map((c) => [c.key, c.items])).toEqual([
      ["a", [1]],
      ["b", [9]],
    ]);
    calls[0]?.end();
    await settle();
    expect(calls[2]).toMatchObject({ key: "a", items: [2, 3] });
  });

  it("size: waits for maxSize items, or maxWaitSeconds after the first", async () => {
    const { timers, calls, batches, settle } = harness("size");
    batches.add("a", 1);
    batches.add("a", 2);
    timers.advance(1999);
    expect(calls).toHaveLength(0);
    batches.add("a", 3);
    expect(calls[0]).toMatchObject({ items: [1, 2, 3], at: 1999 });
    batches.add("a", 4);
    calls[0]?.end();
    await settle();
    // 4 is not ready (one item, its wait not over): the end starts nothing.
    expect(calls).toHaveLength(1);
    timers.advance(2000);
    expect(calls[1]).toMatchObject({ items: [4], at: 3999 });
  });

  it("duration: runs maxWaitSeconds after the key's first waiting item, or at once when full", () => {
    const { timers, calls, batches } = harness("duration", {
      maxSize: 2,
      maxWaitSeconds: 5,
      maxKeyConcurrency: 2,
    });
    batches.add("a", 1);
    timers.advance(3000);
    batches.add("a", 2);
    expect(calls[0]).toMatchObject({ items: [1, 2], at: 3000 });
    batches.add("a", 3);
    timers.advance(4999);
    expect(calls).toHaveLength(1);
    timers.advance(1);
    expect(calls[1]).toMatchObject({ items: [3], at: 8000 });
  });

  it("balanced: at once when idle; otherwise gathers until the call in flight ends, or until full", async () => {
    const { calls, batches, settle } = harness("balanced", {
      maxSize: 3,
      maxWaitSeconds: 60,
      maxKeyConcurrency: 2,
    });
    batches.add("a", 1);
    expect(calls[0]?.items).toEqual([1]);
    batches.add("a", 2);
    batches.add("a", 3);
    expect(calls).toHaveLength(1);
    calls[0]?.end();
    await settle();
    expect(calls[1]?.items).toEqual([2, 3]);
    batches.add("a", 4);
    batches.add("a", 5);
    batches.add("a", 6);
    // Full: a second concurrent call goes without waiting for the first.
    expect(calls[2]?.items).toEqual([4, 5, 6]);
  });

  it("never runs more calls of a key than maxKeyConcurrency, nor more items than maxSize", async () => {
    const { calls, batches, settle } = harness("immediate", {
      maxSize: 2,
      maxWaitSeconds: 1,
      maxKeyConcurrency: 2,
    });
    for (let i = 0; i < 9; i++) batches.add("k", i);
    expect(calls.map((c) => c.items)).toEqual([[0], [1]]);
    expect(batches.inFlight("k")).toBe(2);
    expect(batches.waitingCount("k")).toBe(7);
    while (batches.waitingCount("k") > 0 || batches.inFlight("k") > 0) {
      const open = calls.find((c) => !(c as { ended?: boolean }).ended);
      (open as { ended?: boolean }).ended = true;
      open?.end();
      await settle();
      expect(batches.inFlight("k")).toBeLessThanOrEqual(2);
    }
    expect(calls.flatMap((c) => c.items).sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    expect(Math.max(...calls.map((c) => c.items.length))).toBe(2);
  });

  it("drain: starts nothing more, hands back every waiting item, and waits for the calls in flight", async () => {
    const { timers, calls, batches, settle } = harness("size");
    batches.add("a", 1);
    batches.add("a", 2);
    batches.add("a", 3);
    batches.add("a", 4);
    batches.add("b", 5);
    let drained: number[] | undefined;
    const draining = batches.drain().then((left) => {
      drained = left;
    });
    timers.advance(10_000);
    await settle();
    expect(drained).toBeUndefined();
    expect(calls).toHaveLength(1);
    calls[0]?.end();
    await draining;
    expect(drained?.sort()).toEqual([4, 5]);
    expect(() => batches.add("a", 6)).toThrow(/draining/);
  });
});

describe("docs/guide/batch-kinds.md's policy timelines (maxSize 3, maxWaitSeconds 2, each call 1 s)", () => {
  /** Plays arrivals at their times, each call ending 1 s after it starts; the calls as "t [items]". */
  async function play(policy: BatchPolicy, maxKeyConcurrency = 1) {
    const timers = new ManualTimers();
    const calls: string[] = [];
    const batches = new KeyBatches<string>({
      policy,
      limits: { maxSize: 3, maxWaitSeconds: 2, maxKeyConcurrency },
      timers,
      run: (_key, items) => {
        calls.push(`${(timers.now / 1000).toFixed(1)} [${items.join(" ")}]`);
        const done = deferred();
        timers.after(1000, () => done.resolve());
        return done.promise;
      },
    });
    const arrivals: [number, string][] = [
      [0, "a1"],
      [500, "a2"],
      [800, "a3"],
      [1200, "a4"],
      [3500, "a5"],
    ];
    for (let t = 0; t <= 8000; t += 100) {
      for (const [at, item] of arrivals) if (at === t) batches.add("A", item);
      // A call's end settles on a microtask: let it land before the clock moves on.
      for (let i = 0; i < 5; i++) await Promise.resolve();
      timers.advance(100);
      for (let i = 0; i < 5; i++) await Promise.resolve();
    }
    return calls;
  }

  it.each([
    ["immediate", ["0.0 [a1]", "1.0 [a2 a3]", "2.0 [a4]", "3.5 [a5]"]],
    ["size", ["0.8 [a1 a2 a3]", "3.2 [a4]", "5.5 [a5]"]],
    ["duration", ["0.8 [a1 a2 a3]", "3.2 [a4]", "5.5 [a5]"]],
    ["balanced", ["0.0 [a1]", "1.0 [a2 a3]", "2.0 [a4]", "3.5 [a5]"]],
  ] as const)("%s", async (policy, expected) => {
    expect(await play(policy)).toEqual(expected);
  });

  it("with maxKeyConcurrency 2, immediate starts a2 beside a1; balanced keeps a2, a3 back for a1's end", async () => {
    expect((await play("immediate", 2)).slice(0, 3)).toEqual(["0.0 [a1]", "0.5 [a2]", "1.0 [a3]"]);
    expect((await play("balanced", 2)).slice(0, 2)).toEqual(["0.0 [a1]", "1.0 [a2 a3]"]);
  });
});

describe("KeyBatches: a call that rejects", () => {
  it("is reported to `failed` with its key, and the key goes on", async () => {
    const timers = new ManualTimers();
    const reported: [string, unknown][] = [];
    const ran: number[][] = [];
    const batches = new KeyBatches<number>({
      policy: "immediate",
      limits: { maxSize: 3, maxWaitSeconds: 2, maxKeyConcurrency: 1 },
      timers,
      run: async (_key, items) => {
        ran.push(items);
        if (items.includes(1)) throw new Error("run broke");
      },
      failed: (key, err) => reported.push([key, err]),
    });
    batches.add("a", 1);
    batches.add("a", 2);
    await new Promise((r) => setImmediate(r));
    expect(reported).toEqual([["a", new Error("run broke")]]);
    expect(ran).toEqual([[1], [2]]);
  });
});
