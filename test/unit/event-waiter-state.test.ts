import { describe, expect, it } from "vitest";
import { waiterIsStale, waitsForEvent } from "../../lib/durable/event-waiter-state.ts";
import type { JobItem } from "../../lib/store/job-item.ts";
import { eventPairOf, type StepRecord } from "../../lib/store/step-record.ts";
import { ManualClock } from "../support/clock.ts";
import { queuedItem } from "../support/jobs.ts";

/**
 * What POST /events makes of a waiter from its job as one read found it (docs/architecture.md §22):
 * resume it, delete its pointer, or leave the pointer for a job that may still wait on it.
 */
const clock = new ManualClock();
const now = clock.now();
const until = now + 600_000;
const waitEntry: StepRecord = { n: 1, a: 1, t: now - 1000, event: "order.paid", match: "o-1", until };
const waitingJob = (overrides: Partial<JobItem> = {}): JobItem =>
  queuedItem(clock, {
    status: "scheduled",
    waiting: { for: "event", event: "order.paid", match: "o-1", until },
    steps: { paid: waitEntry },
    ...overrides,
  });

describe("waitsForEvent", () => {
  it("a scheduled job waiting on the pair, its step's entry without data: a resume can win", () => {
    expect(waitsForEvent(waitingJob(), "order.paid", "o-1", "paid")).toBe(true);
  });

  it.each<[string, JobItem | undefined, string, string]>([
    ["no job", undefined, "o-1", "paid"],
    ["another match", waitingJob(), "o-2", "paid"],
    ["another step", waitingJob(), "o-1", "other"],
    ["running", waitingJob({ status: "running" }), "o-1", "paid"],
    ["waiting for a token", waitingJob({ waiting: { for: "token", token: "tok_x", until } }), "o-1", "paid"],
    ["its step has data", waitingJob({ steps: { paid: { ...waitEntry, v: "1" } } }), "o-1", "paid"],
  ])("%s: no resume is tried", (_, job, match, step) => {
    expect(waitsForEvent(job, "order.paid", match, step)).toBe(false);
  });
});

describe("waiterIsStale", () => {
  it.each<[string, JobItem | undefined]>([
    ["its job is gone", undefined],
    ["its job was cancelled", waitingJob({ status: "cancelled" })],
    ["its job is done", waitingJob({ status: "done", waiting: undefined })],
    [
      "its wait was resumed (data in its step)",
      waitingJob({ status: "running", steps: { paid: { ...waitEntry, o: "k" } } }),
    ],
    ["its wait timed out", waitingJob({ status: "running", steps: { paid: { ...waitEntry, until: now } } })],
  ])("%s: stale, the pointer may go", (_, job) => {
    expect(waiterIsStale(job, "paid", now)).toBe(true);
  });

  it.each<[string, JobItem]>([
    // The pointer is written before the suspend that records the step: an event now must not take it.
    [
      "its job runs and has not recorded the wait yet",
      waitingJob({ status: "running", steps: {}, waiting: undefined }),
    ],
    [
      "its job was moved on before the timeout and will wait again",
      waitingJob({ status: "queued", waiting: undefined }),
    ],
    ["its job waits (a resume lost a race)", waitingJob()],
    ["its job is paused, to be resumed by an operator", waitingJob({ status: "paused", waiting: undefined })],
  ])("%s: kept", (_, job) => {
    expect(waiterIsStale(job, "paid", now)).toBe(false);
  });
});

describe("a race's waiter (ctx.waitForAny)", () => {
  const raceEntry: StepRecord = {
    n: 1,
    a: 1,
    t: now - 1000,
    until,
    race: [
      { b: "shipped", event: "order.shipped", match: "o-1" },
      { b: "give-up", until },
    ],
  };
  const racing = (overrides: Partial<JobItem> = {}) =>
    waitingJob({
      waiting: { for: "any", until, pairs: [eventPairOf("order.shipped", "o-1")] },
      steps: { race: raceEntry },
      ...overrides,
    });

  it("a job racing on the pair, no branch won yet: a resume can win", () => {
    expect(waitsForEvent(racing(), "order.shipped", "o-1", "race")).toBe(true);
  });

  it("another pair, or a race already won: no resume is tried; a won race's pointer is stale", () => {
    expect(waitsForEvent(racing(), "order.shipped", "o-2", "race")).toBe(false);
    const won = racing({ steps: { race: { ...raceEntry, w: "give-up" } } });
    expect(waitsForEvent(won, "order.shipped", "o-1", "race")).toBe(false);
    expect(waiterIsStale(won, "race", now)).toBe(true);
    expect(waiterIsStale(racing(), "race", now)).toBe(false);
  });
});
