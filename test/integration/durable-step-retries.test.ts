import { describe, expect, it } from "vitest";
import * as z from "zod";
import { UnrecoverableError } from "../../lib/errors.ts";
import { defineUnboundKind } from "../../lib/job/kind.ts";
import { OffsetClock } from "../support/clock.ts";
import { harnessPerTest, settled } from "../support/engine-harness.ts";

/**
 * A step's own retries (`ctx.step(name, fn, { retries, backoffSeconds })`): its function is called
 * again within the run, and the job's attempt is spent only once they are. Retries are counted per
 * job otherwise (docs/guide/durable-jobs.md, "Retries"). No backoff here: the tests don't wait on time.
 */
const harness = harnessPerTest();
const calls = new Map<string, number>();

const kinds = [
  defineUnboundKind({
    name: "t-step-retries",
    queue: "default",
    payload: z.object({ run: z.string(), fails: z.number().int(), retries: z.number(), fatal: z.boolean() }),
    maxAttempts: 3,
    backoff: { baseSeconds: 1, maxSeconds: 1 },
    timeoutSeconds: 30,
    handler: async ({ run, fails, retries, fatal }, ctx) => {
      const value = await ctx.step(
        "charge",
        () => {
          const n = (calls.get(run) ?? 0) + 1;
          calls.set(run, n);
          if (fatal) throw new UnrecoverableError("card declined");
          if (n <= fails) throw new Error(`call ${n} failed`);
          return { calls: n };
        },
        { retries, backoffSeconds: 0 },
      );
      return { value, attempt: ctx.attempt };
    },
  }),
];

async function run(payload: { fails: number; retries: number; fatal?: boolean }, status: "done" | "dead") {
  const h = await harness.create({ clock: new OffsetClock(), extraKinds: kinds });
  h.startPoller();
  const key = `r-${Math.random()}`;
  const { job } = await h.engine.producer.enqueue({
    kind: "t-step-retries",
    payload: { run: key, fatal: false, ...payload },
  });
  return { job: await settled(h, job.id, status), calls: () => calls.get(key) ?? 0 };
}

describe("a step's own retries", () => {
  it("a step failing twice with 2 retries succeeds on the job's first attempt, its function called 3 times", async () => {
    const { job, calls } = await run({ fails: 2, retries: 2 }, "done");
    expect(JSON.parse(job.result ?? "null")).toEqual({ value: { calls: 3 }, attempt: 1 });
    expect(calls()).toBe(3);
  });

  it("retries spent, the attempt fails and the job retries as before: 1 retry, 3 failures, done on attempt 2", async () => {
    const { job, calls } = await run({ fails: 3, retries: 1 }, "done");
    expect(JSON.parse(job.result ?? "null")).toEqual({ value: { calls: 4 }, attempt: 2 });
    expect(calls()).toBe(4);
  });

  it("an error that chooses its outcome is not retried by the step: UnrecoverableError ends the job at once", async () => {
    const { job, calls } = await run({ fails: 0, retries: 5, fatal: true }, "dead");
    expect(job.attempts).toBe(1);
    expect(calls()).toBe(1);
  });

  it.each([
    [-1, "retries -1 is outside 0..10"],
    [11, "retries 11 is outside 0..10"],
    [1.5, "retries 1.5 is outside 0..10"],
  ])(
    "retries %s: a DurableMisuseError naming the step, dead at once, the function never called",
    async (retries, message) => {
      const { job, calls } = await run({ fails: 0, retries }, "dead");
      expect(job.lastError).toBe(`step "charge": ${message}`);
      expect(job.attempts).toBe(1);
      expect(calls()).toBe(0);
    },
  );
});
