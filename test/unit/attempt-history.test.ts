import { describe, expect, test } from "vitest";
import {
  endedRun,
  HISTORY_ERROR_CHARS,
  HISTORY_KEEP,
  historyView,
  lapsedRun,
  lapseReason,
  withRecord,
} from "../../lib/store/attempt-history.ts";

const T0 = Date.parse("2026-01-01T00:00:00Z");
const iso = (ms: number) => new Date(ms).toISOString();

describe("attempt history (lib/store/attempt-history.ts)", () => {
  test("a lapse is measured from the run's start to its lease's end", () => {
    expect(lapseReason({ startedAt: T0, leaseUntil: T0 + 95_400 })).toBe(
      "lease lapsed after 95 s without an end (the worker stopped: crash, out of memory or a frozen process)",
    );
  });

  test("a run whose lease held past its platform's deadline is a timeout; one that stopped before it is not", () => {
    const run = { startedAt: T0, runDeadline: T0 + 60_000 };
    expect(lapseReason({ ...run, leaseUntil: T0 + 80_000 })).toBe(
      "timeout: lease lapsed after 80 s without an end (the worker reached its time limit, 60 s after the start)",
    );
    // Its last heartbeat's lease ended before the deadline: it stopped earlier, by itself or killed.
    expect(lapseReason({ ...run, leaseUntil: T0 + 40_000 })).toMatch(/^lease lapsed after 40 s .*crash/);
  });

  test("a lapsed run's record ends at its lease's end and keeps its attempt and runner", () => {
    expect(lapsedRun({ attempts: 3, startedAt: T0, leaseUntil: T0 + 30_000, runner: "pool:h/7" })).toEqual({
      a: 3,
      s: T0,
      e: T0 + 30_000,
      o: "lapsed",
      x: expect.stringMatching(/^lease lapsed after 30 s/),
      r: "pool:h/7",
    });
  });

  test("an ended run's error is shortened; a run never started has no record", () => {
    const long = "x".repeat(1000);
    expect(endedRun({ attempts: 1, startedAt: T0 }, "retry", T0 + 5, long)?.x).toHaveLength(
      HISTORY_ERROR_CHARS,
    );
    expect(endedRun({ attempts: 0 }, "retry", T0 + 5, "boom")).toBeUndefined();
  });

  test(`keeps the last ${HISTORY_KEEP} records, and the dropped count adds up over many appends`, () => {
    let fields: {
      attempts: number;
      history?: ReturnType<typeof withRecord>["history"];
      historyDropped?: number;
    } = {
      attempts: 1,
    };
    for (let n = 0; n < HISTORY_KEEP + 5; n++)
      fields = { ...fields, ...withRecord(fields, { a: n, s: T0 + n, e: T0 + n + 1, o: "retry" }) };
    expect(fields.history).toHaveLength(HISTORY_KEEP);
    expect(fields.history?.[0]?.a).toBe(5);
    expect(fields.historyDropped).toBe(5);
  });

  test("the view adds the current run from the item's own fields: running, or a success with no record", () => {
    const ended = [{ a: 1, s: T0, e: T0 + 10, o: "retry" as const, x: "boom" }];
    expect(
      historyView({ status: "running", attempts: 2, startedAt: T0 + 20, runner: "local:1", history: ended }),
    ).toEqual({
      history: [
        { attempt: 1, startedAt: iso(T0), endedAt: iso(T0 + 10), outcome: "retry", error: "boom" },
        { attempt: 2, startedAt: iso(T0 + 20), outcome: "running", runner: "local:1" },
      ],
    });
    expect(historyView({ status: "done", attempts: 1, startedAt: T0, finishedAt: T0 + 7 })).toEqual({
      history: [{ attempt: 1, startedAt: iso(T0), endedAt: iso(T0 + 7), outcome: "done" }],
    });
    // A run already recorded is not shown twice; a job never started shows none.
    expect(
      historyView({ status: "queued", attempts: 1, startedAt: T0, history: ended }).history,
    ).toHaveLength(1);
    expect(historyView({ status: "queued", attempts: 0 })).toEqual({});
  });
});
