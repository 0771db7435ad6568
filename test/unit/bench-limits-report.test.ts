import { describe, expect, it } from "vitest";
import { mostTokensInAMinute, type Run, waitsByLimit } from "../../scripts/bench-limits-report.ts";

/** The limits scenario's attribution of waits and its count of the rate's tokens (scripts/bench-limits-report.ts). */
const run = (over: Partial<Run>): Run => ({
  tenant: "t",
  user: "u",
  tokens: 1,
  createdAt: 0,
  start: 0,
  finish: 0,
  ...over,
});

describe("the limits scenario's report", () => {
  it("gives each step of a wait to the first limit that refused it: tenant full, then user busy, then llm", () => {
    // The tenant's 3 places are held from 0 to 100 ms; the user's run goes on to 150 ms.
    const tenantRuns = [
      run({ user: "u", start: 0, finish: 150 }),
      run({ user: "v", start: 0, finish: 100 }),
      run({ user: "w", start: 0, finish: 100 }),
    ];
    const userRuns = [tenantRuns[0] as Run];
    const waiting = run({ createdAt: 0, start: 200 });
    expect(waitsByLimit(waiting, tenantRuns, userRuns)).toEqual({ tenant: 100, user: 50, llm: 50 });
  });

  it("counts the most tokens started within any minute", () => {
    const runs = [
      run({ tokens: 10, start: 0 }),
      run({ tokens: 20, start: 30_000 }),
      run({ tokens: 5, start: 59_999 }),
      run({ tokens: 40, start: 60_000 }),
      run({ tokens: 1, start: 200_000 }),
    ];
    // [0, 60 s) holds 35; (0, 60 s] holds 65 (the first leaves as the fourth comes).
    expect(mostTokensInAMinute(runs)).toBe(65);
  });
});
