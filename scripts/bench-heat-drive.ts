import { performance } from "node:perf_hooks";
import type { Clock } from "../lib/clock.ts";
import type { App } from "../lib/declarations/define-app.ts";
import type { EnqueueRequest } from "../lib/job/schemas.ts";
import type { LocalStack } from "../local/stack.ts";
import { payload, sleep } from "./bench-config.ts";
import { enqueueTimed } from "./bench-enqueue.ts";

/** What the scale model's scenarios share (scripts/bench-heat.ts, scripts/bench-heat-durable.ts). */

export interface HeatOptions {
  /** Jobs of each job scenario (and waiters of the one-pair event scenarios). */
  jobs: number;
  /** Children of the group scenario's one group. */
  groupChildren: number;
  targetJobsPerSecond: number;
  timeoutMs: number;
}

/** A keyed burst's count: its figures are per enqueue, the arrivals a key's rate is made of. */
export interface BurstCount {
  enqueues: number;
  /** The jobs the enqueues came to (a debounced burst's joins make none). */
  jobs: number;
}

export interface Run {
  app: App;
  clock?: Clock;
  /** Drives the scenario on a metered stack; returns the jobs that ran (or a burst's count). */
  drive(stack: LocalStack): Promise<number | BurstCount>;
  /** The reaper runs the drive needed to go on (waitOrHeal's), when it may need any. */
  reaperRuns?: () => number;
}

/** Waits until `stack`'s metric `metric` reaches `count`, failing at once if a job ends dead. */
export async function waitForTotal(
  stack: LocalStack,
  metric: "succeeded" | "suspended",
  count: number,
  what: string,
  timeoutMs: number,
) {
  const deadline = performance.now() + timeoutMs;
  while (stack.metrics.total(metric) < count) {
    if (stack.metrics.total("dead") > 0) throw new Error(`heat ${what}: a job ended dead`);
    if (performance.now() > deadline)
      throw new Error(`heat ${what}: timed out, ${stack.metrics.total(metric)}/${count} ${metric}`);
    await sleep(10);
  }
}

export const waitForSucceeded = (stack: LocalStack, count: number, what: string, timeoutMs: number) =>
  waitForTotal(stack, "succeeded", count, what, timeoutMs);

/** The jobs created (a uniqueKey repeat of a live job creates none). */
export const enqueueAll = async (stack: LocalStack, requests: EnqueueRequest[]) =>
  (await enqueueTimed(stack, requests)).created;

export const echo = (seq: number, extra: Partial<EnqueueRequest> = {}): EnqueueRequest => ({
  kind: "echo",
  payload: payload(seq, 256),
  ...extra,
});

/** No job ended for this long: the reaper runs, as it would on AWS each minute, but sooner. */
const STALL_MS = 5000;

/**
 * Waits as waitForSucceeded does, for flow-controlled jobs: a hand-over can miss a job parked a
 * moment before (the line is read from the index) and leave its place for the reaper's repair
 * (docs/architecture.md §20), and the heat stack runs no tick of its own. So when no job has ended
 * for STALL_MS, the reaper runs once (its requests are metered with the rest: it is part of the
 * key's traffic on AWS too). Fails on a dead job, or when two reaper runs in a row bring no progress
 * and `timeoutMs` has passed. result: the reaper runs it took.
 */
export async function waitOrHeal(
  stack: LocalStack,
  count: number,
  what: string,
  timeoutMs: number,
): Promise<number> {
  const started = performance.now();
  let [last, lastMove, runs, runsStalled] = [-1, started, 0, 0];
  for (;;) {
    const done = stack.metrics.total("succeeded");
    if (done >= count) return runs;
    if (stack.metrics.total("dead") > 0) throw new Error(`heat ${what}: a job ended dead`);
    if (done !== last) [last, lastMove, runsStalled] = [done, performance.now(), 0];
    else if (performance.now() - lastMove > STALL_MS * (runsStalled + 1)) {
      if (runsStalled >= 2 && performance.now() - started > timeoutMs)
        throw new Error(`heat ${what}: stalled at ${done}/${count} succeeded after ${runs} reaper runs`);
      await stack.ticker.run("reaper");
      [runs, runsStalled] = [runs + 1, runsStalled + 1];
    }
    await sleep(10);
  }
}
