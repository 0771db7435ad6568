import { describe, expect, it } from "vitest";
import { Journal, journalChange } from "../../lib/durable/journal.ts";
import { NonDeterminismError } from "../../lib/durable-errors.ts";
import type { StepRecord } from "../../lib/store/step-record.ts";

/**
 * Journal checks (docs/guide/durable-jobs.md, "Changing a durable kind safely"): a replay that meets
 * a recorded name at another kind of call, or at another place, raises NonDeterminismError naming the
 * job, the step and what changed; records written before the checks (no `op`) keep replaying.
 */
const at = (n: number, op?: StepRecord["op"], fields: Partial<StepRecord> = {}): StepRecord => ({
  n,
  a: 1,
  t: 0,
  ...(op ? { op } : {}),
  ...fields,
});

describe("journalChange", () => {
  it("agrees with a replay of the same call at the same place, and a new name past the journal", () => {
    expect(journalChange(at(1, "step"), "step", 1, "a")).toBeUndefined();
    expect(journalChange(at(2, "sleep", { until: 5 }), "sleep", 2, "nap")).toBeUndefined();
    expect(journalChange(undefined, "step", 3, undefined)).toBeUndefined();
  });

  it("names another kind of call", () => {
    expect(journalChange(at(2, "sleep", { until: 5 }), "step", 2, "nap")).toBe(
      "was recorded as a sleep, and is now met as a step",
    );
    expect(journalChange(at(1, "event"), "token", 1, "x")).toBe(
      "was recorded as an event wait, and is now met as a token",
    );
  });

  it("names another place, and a new name at a recorded place", () => {
    expect(journalChange(at(3, "step"), "step", 2, "nap")).toBe(
      "was recorded at place 3 of the handler's calls, and is now met at place 2",
    );
    expect(journalChange(undefined, "step", 2, "nap")).toBe(
      `is new at place 2 of the handler's calls, where the journal has "nap"`,
    );
  });

  it("checks a record from before journal checks by its fields' type only, never its place", () => {
    // Steps side by side once recorded their count at the time of the write, not their call's place.
    expect(journalChange(at(5), "step", 2, undefined)).toBeUndefined();
    expect(journalChange(at(2, undefined, { until: 9 }), "sleep", 2, undefined)).toBeUndefined();
    expect(journalChange(at(2, undefined, { until: 9 }), "step", 2, undefined)).toBe(
      "was recorded as a sleep, and is now met as a step",
    );
    expect(journalChange(at(1, undefined, { token: "tok_1", v: "{}" }), "step", 1, undefined)).toMatch(
      /recorded as a token/,
    );
  });
});

describe("Journal", () => {
  const steps: Record<string, StepRecord> = {
    a: at(1, "step", { v: "1" }),
    nap: at(2, "sleep", { until: 10 }),
  };

  it("replays the recorded path, then takes new names past it", () => {
    const journal = new Journal("job1", steps, () => expect.fail("no divergence"));
    expect(journal.take("a", "step")).toEqual({ recorded: steps.a, at: 1 });
    expect(journal.take("nap", "sleep")).toEqual({ recorded: steps.nap, at: 2 });
    expect(journal.take("b", "step")).toEqual({ recorded: undefined, at: 3 });
  });

  it("a reordered handler: NonDeterminismError naming the job, the step and the change, then nothing more", () => {
    const heard: Error[] = [];
    const journal = new Journal("job1", steps, (e) => heard.push(e));
    expect(journal.take("a", "step").at).toBe(1);
    const thrown = (() => {
      try {
        journal.take("b", "step");
      } catch (err) {
        return err;
      }
    })();
    expect(thrown).toBeInstanceOf(NonDeterminismError);
    expect(thrown).toMatchObject({ jobId: "job1", step: "b", name: "NonDeterminismError" });
    expect((thrown as Error).message).toBe(
      `job job1: step "b" is new at place 2 of the handler's calls, where the journal has "nap": the handler no longer matches the job's journal, so the job is paused`,
    );
    expect(heard).toEqual([thrown]);
    // The run records nothing after it, whatever the handler does with the error.
    expect(() => journal.check()).toThrow(NonDeterminismError);
    expect(() => journal.take("nap", "sleep")).toThrow(NonDeterminismError);
  });

  it("a name met as another kind of call", () => {
    const journal = new Journal("job2", steps, () => {});
    journal.take("a", "step");
    expect(() => journal.take("nap", "step")).toThrow(
      'job job2: step "nap" was recorded as a sleep, and is now met as a step',
    );
  });
});
