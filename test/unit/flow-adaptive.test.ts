import { describe, expect, it } from "vitest";
import type { FlowRate } from "../../lib/job/flow.ts";
import { climbedRate, halvedRate, rateInForce } from "../../lib/job/flow-adaptive.ts";

/** The AIMD arithmetic of an adaptive rate (docs/guide/flow-control.md, "Limits that adapt"). */
const llm: FlowRate<never> = { limit: 20_000, periodSeconds: 60, adaptive: true };

describe("an adaptive rate's arithmetic", () => {
  it("halves the rate in force on a throttle, from the declared limit when not adapted", () => {
    expect(halvedRate(llm)).toBe(10_000);
    expect(halvedRate(llm, 10_000)).toBe(5_000);
  });

  it("never drops under a sixty-fourth of the limit, nor under one unit", () => {
    let current = llm.limit;
    for (let i = 0; i < 20; i++) current = halvedRate(llm, current);
    expect(current).toBe(313);
    expect(halvedRate({ limit: 3, periodSeconds: 1, adaptive: true }, 1)).toBe(1);
  });

  it("climbs a twentieth of the limit a good run, and is whole again at the limit", () => {
    expect(climbedRate(llm, 10_000)).toBe(11_000);
    let current: number | undefined = 10_000;
    let runs = 0;
    while (current !== undefined) {
      current = climbedRate(llm, current);
      runs++;
    }
    expect(runs).toBe(10);
    expect(climbedRate({ limit: 5, periodSeconds: 1, adaptive: true }, 2)).toBe(3);
  });

  it("applies the rate in force, its burst scaled alike, only to an adaptive rate", () => {
    const adapted = { current: 5_000, since: 0, reason: "429" };
    expect(rateInForce(llm, adapted)).toMatchObject({ limit: 5_000, burst: 5_000, periodSeconds: 60 });
    expect(rateInForce({ ...llm, burst: 400 }, adapted)).toMatchObject({ limit: 5_000, burst: 100 });
    expect(rateInForce(llm, undefined)).toBe(llm);
    const fixed = { ...llm, adaptive: false };
    expect(rateInForce(fixed, adapted)).toBe(fixed);
  });
});
