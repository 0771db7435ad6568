import { describe, expect, it } from "vitest";
import { app } from "../../app/index.ts";
import { defineApp } from "../../lib/declarations/define-app.ts";
import { tableLayout } from "../../lib/declarations/scale.ts";
import { DeclarationError, validateDeclarations } from "../../lib/declarations/validate-app.ts";

describe("the table layout follows the app's declared rate", () => {
  it("keeps today's 8 index shards for an app that declares nothing, and grows both spreads with the rate", () => {
    expect(tableLayout(undefined)).toEqual({ indexShards: 8, slicePartitions: 2 });
    // 3 index writes a job and 1 slice write a child, over 500 units a partition (half the limit).
    expect(tableLayout({ jobsPerSecond: 10_000 })).toEqual({ indexShards: 60, slicePartitions: 20 });
    expect(tableLayout({ jobsPerSecond: 1 })).toEqual({ indexShards: 8, slicePartitions: 1 });
    const per = (rate: number) => {
      const l = tableLayout({ jobsPerSecond: rate });
      return { index: (rate * 3) / l.indexShards, slice: rate / l.slicePartitions };
    };
    for (const rate of [500, 2000, 10_000, 100_000]) {
      expect(per(rate).index).toBeLessThanOrEqual(500);
      expect(per(rate).slice).toBeLessThanOrEqual(500);
    }
  });

  it("refuses a rate that is not a number above 0, naming the field", () => {
    const base = { queues: app.queues, kinds: [], poolKinds: [] };
    for (const jobsPerSecond of [0, -5, Number.NaN, Number.POSITIVE_INFINITY, 2_000_000]) {
      expect(validateDeclarations({ ...base, scale: { jobsPerSecond } })).toContainEqual(
        expect.stringMatching(/^scale\.jobsPerSecond must be a number above 0 and at most 1000000, got /),
      );
    }
    expect(validateDeclarations({ ...base, scale: { jobsPerSecond: 10_000 } })).toEqual([]);
    expect(() => defineApp({ ...app, scale: { jobsPerSecond: 0 } })).toThrow(DeclarationError);
  });
});
