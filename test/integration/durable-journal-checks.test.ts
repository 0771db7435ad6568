import { describe, expect, it } from "vitest";
import * as z from "zod";
import { defineUnboundKind } from "../../lib/job/kind.ts";
import { runReaper } from "../../lib/ops/reaper.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import { OffsetClock } from "../support/clock.ts";
import { harnessPerTest, settled } from "../support/engine-harness.ts";
import { waitFor } from "../support/wait.ts";

/**
 * Journal checks on the emulators (docs/guide/durable-jobs.md, "Changing a durable kind safely"): a
 * job sleeps, its kind's handler is swapped for one that calls its steps in another order (a deploy
 * under a suspended run), and the job resumes. It must end paused with a NonDeterminismError naming
 * it, the step and the change, its records untouched and the moved step's function never run: never
 * a result computed from the wrong records.
 */
const calls: string[] = [];
let handlerOf: "first" | "reordered" | "retyped" = "first";
const stepB = (run: string) => {
  calls.push(`${run}:b`);
  return 2;
};

const kinds = [
  defineUnboundKind({
    name: "t-reorder",
    queue: "default",
    payload: z.object({ run: z.string() }),
    maxAttempts: 3,
    timeoutSeconds: 30,
    handler: async ({ run }, ctx) => {
      const a = await ctx.step("a", () => {
        calls.push(`${run}:a`);
        return 1;
      });
      if (handlerOf === "first") {
        await ctx.sleep("nap", 20 * 60);
        const b = await ctx.step("b", () => stepB(run));
        return { a, b };
      }
      if (handlerOf === "retyped") {
        // "nap" was a sleep; now it names a step.
        await ctx.step("nap", () => calls.push(`${run}:nap`));
        return { a };
      }
      const b = await ctx.step("b", () => stepB(run));
      try {
        await ctx.sleep("nap", 20 * 60);
      } catch {
        // A handler that swallows the error still leaves its job paused.
      }
      return { a, b };
    },
  }),
];

const harness = harnessPerTest();

describe("a durable kind changed under a sleeping job", () => {
  it.each([
    ["reordered", 'step "b" is new at place 2 of the handler\'s calls, where the journal has "nap"'],
    ["retyped", 'step "nap" was recorded as a sleep, and is now met as a step'],
  ] as const)(
    "%s: the job ends paused with a NonDeterminismError, its records unchanged",
    async (variant, change) => {
      handlerOf = "first";
      const clock = new OffsetClock();
      const h = await harness.create({ clock, extraKinds: kinds });
      h.startPoller();
      const run = `${variant}-${Date.now()}`;
      const { job } = await h.engine.producer.enqueue({ kind: "t-reorder", payload: { run } });
      const asleep = await waitFor(async () => {
        const item = await getJob(h.engine.store, job.id);
        return item?.waiting ? item : undefined;
      }, "the sleep");
      expect(asleep.steps?.nap).toMatchObject({ n: 2, op: "sleep" });
      handlerOf = variant;
      clock.advance(20 * 60 * 1000);
      expect((await runReaper(h.engine)).promoted).toBe(1);
      const paused = await settled(h, job.id, "paused");
      expect(paused.lastError).toBe(
        `job ${job.id}: ${change}: the handler no longer matches the job's journal, so the job is paused`,
      );
      expect(paused.result).toBeUndefined();
      expect(Object.keys(paused.steps ?? {}).sort()).toEqual(["a", "nap"]);
      expect(calls.filter((c) => c.startsWith(run))).toEqual([`${run}:a`]);
    },
  );

  it("the same handler resumes and finishes (a control for the check)", async () => {
    handlerOf = "first";
    const clock = new OffsetClock();
    const h = await harness.create({ clock, extraKinds: kinds });
    h.startPoller();
    const run = `same-${Date.now()}`;
    const { job } = await h.engine.producer.enqueue({ kind: "t-reorder", payload: { run } });
    await waitFor(async () => (await getJob(h.engine.store, job.id))?.waiting, "the sleep");
    clock.advance(20 * 60 * 1000);
    expect((await runReaper(h.engine)).promoted).toBe(1);
    const done = await settled(h, job.id, "done");
    expect(JSON.parse(done.result ?? "")).toEqual({ a: 1, b: 2 });
    expect(done.steps?.b).toMatchObject({ n: 3, op: "step" });
  });
});
