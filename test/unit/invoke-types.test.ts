import { describe, expect, expectTypeOf, it } from "vitest";
import * as z from "zod";
import { defineKind } from "../../app/define.ts";
import type { JsonValue } from "../../lib/declarations/app-names.ts";
import { ChildJobError } from "../../lib/errors.ts";

/**
 * `ctx.invoke`'s types come from the app (lib/declarations/define-app.ts): only its kinds, each
 * with its payload, and the child kind's result back. `npm run typecheck` checks this file: a
 * `@ts-expect-error` that stops being an error fails it.
 */
const parent = defineKind({
  name: "t-invoke-types",
  queue: "default",
  payload: z.object({ row: z.number() }),
  maxAttempts: 1,
  timeoutSeconds: 30,
  handler: async ({ row }, ctx) => {
    try {
      // Enqueued once per (job, name); the run ends until the child ends.
      const scored = await ctx.invoke("score-row", { row }, { name: "score" });
      return { score: scored.score };
    } catch (err) {
      if (err instanceof ChildJobError) return { failed: err.childError };
      throw err;
    }
  },
});

/** Never run: each line is a compile check. */
const typeChecks = defineKind({
  name: "t-invoke-type-checks",
  queue: "default",
  payload: z.object({}),
  maxAttempts: 1,
  timeoutSeconds: 30,
  handler: async (_p, ctx) => {
    const scored = await ctx.invoke("score-row", { row: 3 });
    expectTypeOf(scored).toEqualTypeOf<{ row: number; score: number }>();
    const digest = await ctx.invoke("py-digest", { any: ["json"] });
    expectTypeOf(digest).toEqualTypeOf<JsonValue>();
    // @ts-expect-error a kind the app doesn't have
    await ctx.invoke("score-rows", { row: 3 });
    // @ts-expect-error a payload the child kind's schema doesn't take
    await ctx.invoke("score-row", { row: "3" });
    const many = await ctx.invokeMany("score-row", [{ row: 1 }, { row: 2 }], { concurrency: 2 });
    expectTypeOf(many).toEqualTypeOf<{ row: number; score: number }[]>();
    // @ts-expect-error one payload the child kind's schema doesn't take
    await ctx.invokeMany("score-row", [{ row: 1 }, { row: "2" }]);
    return null;
  },
});

describe("ctx.invoke's types", () => {
  it("a parent's result may be typed from its child's", () => {
    expectTypeOf(parent.handler).returns.resolves.toEqualTypeOf<
      { score: number; failed?: never } | { failed: string; score?: never }
    >();
    expect([parent.name, typeChecks.name]).toEqual(["t-invoke-types", "t-invoke-type-checks"]);
  });
});
