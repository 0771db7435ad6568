import { describe, expect, it } from "vitest";
import * as z from "zod";
import { replayFixture } from "../../lib/durable/fixture-replay.ts";
import { type FixtureOp, type JournalFixture, parseJournalFixture } from "../../lib/job/journal-fixture.ts";
import type { JobContext } from "../../lib/job/kind.ts";

/**
 * A journal fixture's offline replay (lib/durable/fixture-replay.ts), each outcome from a fixture of
 * the shape `skyforge durable fixture` writes (test/integration/durable-fixtures.test.ts records one
 * from a real run): where it stops, what it reports, and what it never does (run a step's function).
 */
const fixture = (ops: FixtureOp[], status = "scheduled"): JournalFixture => ({
  format: 1,
  kind: "k",
  jobId: "01JREPLAY00000000000000000",
  status,
  recordedAt: "2026-12-02T06:00:00.000Z",
  payload: { order: "o-1" },
  ops,
});
const kindOf = (handler: (p: { order: string }, ctx: JobContext) => Promise<unknown>) => ({
  name: "k",
  queue: "default",
  maxAttempts: 3,
  payload: z.object({ order: z.string() }),
  handler: handler as (p: unknown, ctx: JobContext) => Promise<unknown>,
});
const ran: string[] = [];
const step = (name: string, place: number, result?: unknown): FixtureOp => ({
  name,
  op: "step",
  place,
  status: "done",
  ...(result !== undefined ? { result } : {}),
});

describe("replaying a journal fixture offline", () => {
  it("recorded steps return their results without running; the run stops at the wait it is suspended in", async () => {
    const seen: unknown[] = [];
    const out = await replayFixture(
      kindOf(async ({ order }, ctx) => {
        seen.push(await ctx.step("a", () => ran.push("a")));
        seen.push(await ctx.waitForEvent("paid", { event: "order.paid", match: order, timeoutSeconds: 60 }));
        seen.push(await ctx.step("b", () => ran.push("b")));
      }),
      fixture([step("a", 1, { n: 1 }), { name: "paid", op: "event", place: 2, status: "waiting" }]),
    );
    expect(out).toEqual({ as: "matches", stop: { why: "waiting", name: "paid" }, unmet: [], versions: {} });
    expect(seen).toEqual([{ n: 1 }]);
    expect(ran).toEqual([]);
  });

  it("a recorded call the handler no longer makes is unmet; a new one past the recording stops it", async () => {
    const out = await replayFixture(
      kindOf(async (_, ctx) => {
        await ctx.step("a", () => 1);
        await ctx.step("c", () => 3);
      }),
      fixture([step("a", 1, 1), step("b", 2, 2)], "done"),
    );
    expect(out).toMatchObject({ as: "diverged" });
    const removed = await replayFixture(
      kindOf(async (_, ctx) => ctx.step("a", () => 1)),
      fixture([step("a", 1, 1), step("b", 2, 2)], "done"),
    );
    expect(removed).toEqual({ as: "matches", unmet: ["b"], versions: {} });
    const added = await replayFixture(
      kindOf(async (_, ctx) => {
        await ctx.step("a", () => 1);
        await ctx.step("b", () => 2);
        await ctx.step("c", () => 3);
      }),
      fixture([step("a", 1, 1), step("b", 2, 2)], "done"),
    );
    expect(added).toEqual({ as: "matches", stop: { why: "new", name: "c" }, unmet: [], versions: {} });
  });

  it("a wait timed out: met again in a job that ended, the wake still to come in a suspended one", async () => {
    const handler = kindOf(async ({ order }, ctx) => {
      try {
        await ctx.waitForEvent("paid", { event: "order.paid", match: order, timeoutSeconds: 60 });
      } catch {
        await ctx.step("refund", () => ran.push("refund"));
      }
    });
    const ops: FixtureOp[] = [
      { name: "paid", op: "event", place: 1, status: "timed-out" },
      step("refund", 2, 1),
    ];
    expect(await replayFixture(handler, fixture(ops, "done"))).toEqual({
      as: "matches",
      unmet: [],
      versions: {},
    });
    expect(await replayFixture(handler, fixture(ops.slice(0, 1)))).toMatchObject({
      as: "matches",
      stop: { why: "waiting", name: "paid" },
    });
  });

  it("a child's recorded end is its result, or its ChildJobError; a race returns its recorded winner", async () => {
    const seen: unknown[] = [];
    const out = await replayFixture(
      kindOf(async ({ order }, ctx) => {
        seen.push(await ctx.invoke("echo", { order }));
        try {
          await ctx.invoke("fail", {}, { name: "charge" });
        } catch (err) {
          seen.push((err as Error).name);
        }
        seen.push(
          await ctx.waitForAny("ship", [
            ctx.event("shipped", { event: "order.shipped", match: order }),
            ctx.timer("gave-up", 30),
          ]),
        );
      }),
      fixture(
        [
          {
            name: "echo",
            op: "child",
            place: 1,
            status: "done",
            child: "c1",
            result: { status: "done", result: 7 },
          },
          {
            ...{ name: "charge", op: "child", place: 2, status: "done", child: "c2" },
            result: { status: "dead", error: "card declined" },
          },
          { name: "ship", op: "race", place: 3, status: "done", won: "shipped", result: { carrier: "x" } },
        ],
        "done",
      ),
    );
    expect(out).toEqual({ as: "matches", unmet: [], versions: {} });
    expect(seen).toEqual([7, "ChildJobError", { branch: "shipped", data: { carrier: "x" } }]);
  });

  it("a misuse, a payload the schema refuses, a handler that never reaches a call: each named", async () => {
    const twice = await replayFixture(
      kindOf(async (_, ctx) => {
        await ctx.step("a", () => 1);
        await ctx.step("a", () => 1);
      }),
      fixture([step("a", 1, 1)], "done"),
    );
    expect(twice).toMatchObject({ as: "misuse", error: { message: expect.stringMatching(/used twice/) } });
    const payload = await replayFixture(
      kindOf(async () => undefined),
      { ...fixture([]), payload: { order: 42 } },
    );
    expect(payload).toEqual({ as: "payload", problem: expect.stringMatching(/^order: /) });
    const stuck = await replayFixture(
      kindOf(() => new Promise(() => {})),
      fixture([step("a", 1, 1)]),
      50,
    );
    expect(stuck).toEqual({ as: "unsettled", boundMs: 50 });
  });

  it("a file of another format or shape is refused, naming why", () => {
    expect(parseJournalFixture("{")).toMatchObject({ problem: expect.stringMatching(/^not JSON/) });
    expect(parseJournalFixture('{"format":2}')).toEqual({
      problem: "format 2: this skyforge reads journal fixtures of format 1",
    });
    const extra = JSON.stringify({ ...fixture([]), secret: "x" });
    expect(parseJournalFixture(extra)).toMatchObject({ problem: expect.stringMatching(/Unrecognized key/) });
  });
});
