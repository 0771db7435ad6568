import { describe, expect, it } from "vitest";
import {
  analyseDurable,
  deriveDurable,
  durableJson,
  type JobFigures,
  withStepTime,
} from "../../scripts/bench-durable-report.ts";
import type { MeteredUsage } from "../../scripts/bench-usage.ts";

/**
 * The durable scenario's arithmetic (scripts/bench-durable-report.ts): a step's, a sleep's and a
 * child invocation's share of what their jobs cost beyond a plain job's, on figures made by hand. The scenario itself runs in
 * test/integration/bench-cli.test.ts.
 */

const figures = (f: Partial<JobFigures>): JobFigures => ({
  jobItemWrites: 0,
  jobItemWcu: 0,
  keyStateWrites: 0,
  lostConditions: 0,
  indexWcu: 0,
  writes: 0,
  reads: 0,
  wcu: 0,
  rcu: 0,
  sends: 0,
  receives: 0,
  sqsBilled: 0,
  renewals: 0,
  lambdaInvocations: 0,
  itemBytes: 0,
  usdPerMillion: 0,
  usdPerMillionMeasured: 0,
  ...f,
});

const plain = figures({ usdPerMillion: 2, writes: 3, wcu: 3, jobItemWrites: 3, sends: 1, sqsBilled: 0.4 });
const steps = figures({
  usdPerMillion: 14,
  writes: 13,
  wcu: 21,
  jobItemWrites: 13,
  sends: 1,
  sqsBilled: 0.4,
});
/** A 3-step job whose item stays under 1 KB: each step one write of 1 WCU. */
const smallSteps = figures({
  usdPerMillion: 3.8,
  writes: 6,
  wcu: 6,
  jobItemWrites: 6,
  sends: 1,
  sqsBilled: 0.4,
});
const counts = { steps: 10, smallSteps: 3, map: 10 };
/** A 10-step ctx.map job: the steps job's writes, its steps side by side. */
const map = figures({
  usdPerMillion: 13,
  writes: 13,
  wcu: 21,
  jobItemWrites: 13,
  sends: 1,
  sqsBilled: 0.4,
});
const sleeps = figures({
  usdPerMillion: 4.5,
  writes: 5,
  wcu: 5,
  indexWcu: 2,
  sends: 2,
  receives: 1,
  sqsBilled: 2,
  lambdaInvocations: 0.2,
});

/** A parent of one child: its invoke's write, the child's own job, the resume and the parent's second run. */
const invoke = figures({
  usdPerMillion: 5.5,
  writes: 9,
  wcu: 10,
  jobItemWrites: 7,
  sends: 3,
  receives: 2,
  sqsBilled: 2.4,
  lambdaInvocations: 0.4,
});

describe("durable bench: a step's and a sleep's share", () => {
  it("a step: (steps job − plain job) / steps; a sleep: sleeps job − plain job", () => {
    const d = deriveDurable({ plain, steps, sleeps }, counts);
    expect(d.usdPerMillionSteps).toBeCloseTo(1.2, 12);
    expect(d.usdPerMillionSleeps).toBeCloseTo(2.5, 12);
    expect(d.perStep).toMatchObject({ dynamodbWrites: 1, wcu: 1.8, jobItemWrites: 1, sends: 0 });
    expect(d.perSleep).toMatchObject({ dynamodbWrites: 2, wcu: 2, sends: 1, sqsRequests: 1.6 });
    expect(d.perSleep.lambdaInvocations).toBeCloseTo(0.2, 12);
  });

  it("a parallel step (ctx.map): (map job − plain job) / its steps, beside Lambda durable's $8/M", () => {
    const d = deriveDurable({ plain, map }, counts);
    expect(d.usdPerMillionMapSteps).toBeCloseTo(1.1, 12);
    expect(d.perMapStep).toMatchObject({ dynamodbWrites: 1, wcu: 1.8, jobItemWrites: 1, sends: 0 });
    expect(d.timesCheaperThanLambdaDurable.mapStep).toBeCloseTo(8 / 1.1, 12);
    expect(deriveDurable({ plain, steps }, counts).usdPerMillionMapSteps).toBeNull();
  });

  it("the status-index estimate is priced apart, at the write unit's list price", () => {
    const d = deriveDurable({ plain, steps, sleeps }, counts);
    expect(d.usdPerMillionStepsWithIndex).toBeCloseTo(1.2, 12);
    expect(d.usdPerMillionSleepsWithIndex).toBeCloseTo(2.5 + 2 * 0.625, 12);
  });

  it("against the goal ($1/M steps) and Lambda durable functions' $8/M operations, for each step window", () => {
    const over = deriveDurable({ plain, steps, smallSteps }, counts);
    expect(over.goalMet).toEqual({ steps: false, smallSteps: true });
    expect(over.usdPerMillionSmallSteps).toBeCloseTo(0.6, 12);
    expect(over.perSmallStep).toMatchObject({ dynamodbWrites: 1, wcu: 1, sends: 0 });
    expect(over.timesCheaperThanLambdaDurable.step).toBeCloseTo(8 / 1.2, 12);
    expect(over.timesCheaperThanLambdaDurable.smallStep).toBeCloseTo(8 / 0.6, 12);
    const under = deriveDurable({ plain, steps: { ...steps, usdPerMillion: 12 } }, counts);
    expect(under.goalMet).toEqual({ steps: true, smallSteps: null });
    expect(under.timesCheaperThanLambdaDurable.step).toBeCloseTo(8, 12);
  });

  it("a child invocation: invoke job − plain job, with its requests, beside Lambda durable's $8/M operations", () => {
    const d = deriveDurable({ plain, steps, invoke }, counts);
    expect(d.usdPerMillionChildInvocations).toBeCloseTo(3.5, 12);
    expect(d.perChildInvocation).toMatchObject({ dynamodbWrites: 6, wcu: 7, jobItemWrites: 4, sends: 2 });
    expect(d.perChildInvocation.sqsRequests).toBeCloseTo(2, 12);
    expect(d.perChildInvocation.lambdaInvocations).toBeCloseTo(0.4, 12);
    expect(d.timesCheaperThanLambdaDurable.childInvocation).toBeCloseTo(8 / 3.5, 12);
    // The step figures are the steps window's alone.
    expect(d.usdPerMillionSteps).toBeCloseTo(1.2, 12);
    const without = deriveDurable({ plain, steps }, counts);
    expect([without.usdPerMillionChildInvocations, without.perChildInvocation.wcu]).toEqual([null, null]);
    expect(without.timesCheaperThanLambdaDurable.childInvocation).toBeNull();
  });

  it("a window not measured leaves its figures null, and the others stand", () => {
    const d = deriveDurable({ plain, sleeps }, counts);
    expect([d.usdPerMillionSteps, d.perStep.wcu, d.goalMet.steps]).toEqual([null, null, null]);
    expect(d.usdPerMillionSleeps).toBeCloseTo(2.5, 12);
    const none = deriveDurable({ steps, sleeps }, counts);
    expect([none.usdPerMillionSteps, none.usdPerMillionSleeps]).toEqual([null, null]);
  });

  it("the JSON line of a run that failed before any window: the error, every figure null", () => {
    const json = durableJson(
      analyseDurable({
        jobs: 500,
        stepsPerJob: 10,
        sleepSeconds: 1,
        stepResultBytes: 100,
        smallStepsPerJob: 3,
        smallStepResultBytes: 40,
        mapStepsPerJob: 10,
        mapConcurrency: 10,
        ticks: 0,
        windows: {},
        error: "durable scenario: timed out, 3/500 done",
      }),
    );
    expect(json.error).toBe("durable scenario: timed out, 3/500 done");
    expect(json.usdPerMillionJobs).toEqual({
      plain: null,
      steps: null,
      smallSteps: null,
      sleeps: null,
      map: null,
      invoke: null,
    });
    expect(json.usdPerMillionMapSteps).toBeNull();
    expect(json.usdPerMillionChildInvocations).toBeNull();
    expect(Object.values(json.perChildInvocation).every((v) => v === null)).toBe(true);
    expect(json.timesCheaperThanLambdaDurable.childInvocation).toBeNull();
    expect([json.usdPerMillionSteps, json.usdPerMillionSmallSteps, json.usdPerMillionSleeps]).toEqual([
      null,
      null,
      null,
    ]);
    expect(json.goalMet).toEqual({ steps: null, smallSteps: null });
  });

  it("a job's steps lengthen each worker invocation's assumed time by one round trip each", () => {
    const m = { workerInvocations: 10, gbs: { assumed: 1, measured: 2 } } as MeteredUsage;
    const longer = withStepTime(m, 10);
    // 10 invocations × 0.5 GB × 10 steps × 8 ms.
    expect(longer.gbs.assumed).toBeCloseTo(1 + 10 * 0.5 * 0.08, 12);
    expect(longer.gbs.measured).toBe(2);
  });
});
