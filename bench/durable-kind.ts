import * as z from "zod";
import { app } from "../app/index.ts";
import { type App, defineApp } from "../lib/declarations/define-app.ts";
import { defineUnboundKind } from "../lib/job/kind.ts";
import { noopKind } from "./noop-kind.ts";

/**
 * The bench's durable scenario (docs/architecture.md §22, docs/guide/durable-jobs.md "Cost"): two fenced
 * kinds on `default` whose handlers do nothing but their durable calls, so a window of each prices
 * the calls themselves beside the no-op kind's plain job. Not the app's `onboard`: its token wait
 * needs a caller, and its two steps and one sleep couldn't be told apart. Bench-only, never deployed.
 */
export const BENCH_STEPS_KIND = "bench-steps";
export const BENCH_SLEEP_KIND = "bench-sleep";
/** Steps a job of the steps kind records. */
export const STEPS_PER_JOB = 10;
/** The sleep kind's one sleep: short, so it wakes by a delayed SQS message (up to 15 min), not the reaper. */
export const SLEEP_SECONDS = 1;
/** A step's result: about 100 bytes of JSON, as a step returning an id and a status would. */
export const STEP_RESULT_BYTES = 100;

const Payload = z.object({ seq: z.number(), pad: z.string() });

/** `{"step":i,"id":"…","ok":true}` padded to STEP_RESULT_BYTES bytes of JSON. */
export function stepResult(step: number): { step: number; ok: boolean; id: string } {
  const bare = JSON.stringify({ step, ok: true, id: "" }).length;
  return { step, ok: true, id: "x".repeat(Math.max(0, STEP_RESULT_BYTES - bare)) };
}

export const stepsKind = defineUnboundKind({
  name: BENCH_STEPS_KIND,
  payload: Payload,
  queue: "default",
  maxAttempts: 3,
  timeoutSeconds: 30,
  handler: async (_payload, ctx) => {
    for (let i = 1; i <= STEPS_PER_JOB; i += 1) await ctx.step(`s${i}`, () => stepResult(i));
    return null;
  },
});

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

/**
 * The `default` queue's lease in the bench: on AWS a 10-step job ends in about a tenth of a second,
 * long before its first renewal (every third of the lease, 10 s at the app's 30 s); on this shared
 * machine a hundred jobs writing steps one after another into one dynalite can take longer than
 * that, and each renewal would add a write and a visibility change a job never pays on AWS. The
 * report still counts renewals (heartbeats per job), so one that happens anyway shows.
 */
export const BENCH_LEASE_SECONDS = 120;

/** The app with the no-op kind (the plain job) and the two durable kinds added, `default`'s lease longer. */
export const durableBenchApp = (): App =>
  defineApp({
    ...app,
    queues: app.queues.map((q) => (q.name === "default" ? { ...q, leaseSeconds: BENCH_LEASE_SECONDS } : q)),
    kinds: [...app.kinds, noopKind, stepsKind, sleepKind],
  });
