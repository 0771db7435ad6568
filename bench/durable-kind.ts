import * as z from "zod";
import { app } from "../app/index.ts";
import { type App, defineApp } from "../lib/declarations/define-app.ts";
import { defineUnboundKind } from "../lib/job/kind.ts";
import { NOOP_KIND, noopKind } from "./noop-kind.ts";

/**
 * The bench's durable scenario (docs/architecture.md §22, docs/guide/durable-jobs.md "Cost"): fenced
 * kinds on `default` whose handlers do nothing but their durable calls, so a window of each prices
 * the calls themselves beside the no-op kind's plain job. Not the app's `onboard`: its token wait
 * needs a caller, and its two steps and one sleep couldn't be told apart. Bench-only, never deployed.
 */
export const BENCH_STEPS_KIND = "bench-steps";
export const BENCH_SMALL_STEPS_KIND = "bench-small-steps";
export const BENCH_SLEEP_KIND = "bench-sleep";
export const BENCH_MAP_KIND = "bench-map";
export const BENCH_INVOKE_KIND = "bench-invoke";
/** Steps a job of the steps kind records. */
export const STEPS_PER_JOB = 10;
/** The sleep kind's one sleep: short, so it wakes by a delayed SQS message (up to 15 min), not the reaper. */
export const SLEEP_SECONDS = 1;
/** A step's result: about 100 bytes of JSON, as a step returning an id and a status would. */
export const STEP_RESULT_BYTES = 100;
/**
 * The small-steps kind: few steps with short results (an id), so its job item stays under 1 KB and
 * each step's write is the one WCU the goal names; the steps kind shows what a grown item costs.
 */
export const SMALL_STEPS_PER_JOB = 3;
export const SMALL_STEP_RESULT_BYTES = 40;
/**
 * The map kind: one `ctx.map` of the steps kind's shape (10 results of ~100 bytes), all side by side,
 * so its steps price against the steps kind's sequential ones.
 */
export const MAP_STEPS_PER_JOB = STEPS_PER_JOB;
export const MAP_CONCURRENCY = 10;

const Payload = z.object({ seq: z.number(), pad: z.string() });

/** `{"step":i,"id":"…","ok":true}` padded to `bytes` bytes of JSON. */
export function stepResult(
  step: number,
  bytes = STEP_RESULT_BYTES,
): { step: number; ok: boolean; id: string } {
  const bare = JSON.stringify({ step, ok: true, id: "" }).length;
  return { step, ok: true, id: "x".repeat(Math.max(0, bytes - bare)) };
}

/** A kind whose handler records `steps` steps of `resultBytes` each, and does nothing else. */
const stepsKindOf = (name: string, steps: number, resultBytes: number) =>
  defineUnboundKind({
    name,
    payload: Payload,
    queue: "default",
    maxAttempts: 3,
    timeoutSeconds: 30,
    handler: async (_payload, ctx) => {
      for (let i = 1; i <= steps; i += 1) await ctx.step(`s${i}`, () => stepResult(i, resultBytes));
      return null;
    },
  });

export const stepsKind = stepsKindOf(BENCH_STEPS_KIND, STEPS_PER_JOB, STEP_RESULT_BYTES);
export const smallStepsKind = stepsKindOf(
  BENCH_SMALL_STEPS_KIND,
  SMALL_STEPS_PER_JOB,
  SMALL_STEP_RESULT_BYTES,
);

export const sleepKind = defineUnboundKind({
  name: BENCH_SLEEP_KIND,
  payload: Payload,
  queue: "default",
  maxAttempts: 3,
  timeoutSeconds: 30,
  handler: async (_payload, ctx) => {
    await ctx.sleep("nap", SLEEP_SECONDS);
    return null;
  },
});

export const mapKind = defineUnboundKind({
  name: BENCH_MAP_KIND,
  payload: Payload,
  queue: "default",
  maxAttempts: 3,
  timeoutSeconds: 30,
  handler: async (_payload, ctx) => {
    const items = Array.from({ length: MAP_STEPS_PER_JOB }, (_, i) => i + 1);
    await ctx.map("m", items, (i) => stepResult(i), { concurrency: MAP_CONCURRENCY });
    return null;
  },
});

/**
 * A parent that invokes one child, the no-op kind, with its own payload, and does nothing else: its
 * job beside the plain job prices a child invocation (the child's enqueue, its run as a plain job,
 * the parent's resume and second run).
 */
export const invokeKind = defineUnboundKind({
  name: BENCH_INVOKE_KIND,
  payload: Payload,
  queue: "default",
  maxAttempts: 3,
  timeoutSeconds: 30,
  handler: async (payload, ctx) => {
    await ctx.invoke(NOOP_KIND, payload, { name: "child" });
    return null;
  },
});

/**
 * The `default` queue's lease in the bench: on AWS a 10-step job ends in about a tenth of a second,
 * long before its first renewal (every third of the lease, 10 s at the app's 30 s); on this shared
 * machine a hundred jobs writing steps one after another into one dynalite can take longer than
 * that, and each renewal would add a write and a visibility change a job never pays on AWS. The
 * report still counts renewals (heartbeats per job), so one that happens anyway shows.
 */
export const BENCH_LEASE_SECONDS = 120;

/** The app with the no-op kind (the plain job) and the durable kinds added, `default`'s lease longer. */
export const durableBenchApp = (): App =>
  defineApp({
    ...app,
    queues: app.queues.map((q) => (q.name === "default" ? { ...q, leaseSeconds: BENCH_LEASE_SECONDS } : q)),
    kinds: [...app.kinds, noopKind, stepsKind, smallStepsKind, sleepKind, mapKind, invokeKind],
  });
