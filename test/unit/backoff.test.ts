import { describe, expect, test } from "vitest";
import { backoffSeconds } from "../../lib/runtime/backoff.ts";

const policy = { baseSeconds: 2, maxSeconds: 3600 };
/** The largest value Math.random can return. */
const almostOne = 1 - Number.EPSILON;

describe("backoffSeconds", () => {
  test("grows exponentially: half the nominal delay is fixed, the other half random", () => {
    // nominal = base * 2^(attempt-1): 2, 4, 8, 16, 32 ...
    expect([1, 2, 3, 4, 5].map((a) => backoffSeconds(a, policy, () => 0))).toEqual([1, 2, 4, 8, 16]);
    expect([1, 2, 3, 4, 5].map((a) => backoffSeconds(a, policy, () => almostOne))).toEqual([2, 4, 8, 16, 32]);
    expect(backoffSeconds(4, policy, () => 0.5)).toBe(12); // 8 + 0.5 * 8
  });

  test("is capped at maxSeconds, also for huge attempt numbers", () => {
    expect(backoffSeconds(12, policy, () => almostOne)).toBe(3600); // nominal 4096 → 3600
    expect(backoffSeconds(12, policy, () => 0)).toBe(1800);
    expect(backoffSeconds(5000, policy, () => almostOne)).toBe(3600); // 2^4999 overflows to Infinity
    expect(backoffSeconds(5000, policy, () => 0)).toBe(1800);
    expect(backoffSeconds(7, { baseSeconds: 10, maxSeconds: 100 }, () => almostOne)).toBe(100);
  });

  test("jitter stays within [nominal/2, nominal] for every random value", () => {
    for (let attempt = 1; attempt <= 15; attempt++) {
      const nominal = Math.min(policy.maxSeconds, policy.baseSeconds * 2 ** (attempt - 1));
      for (const r of [0, 0.001, 0.25, 0.5, 0.75, 0.999, almostOne]) {
        const d = backoffSeconds(attempt, policy, () => r);
        expect(d).toBeGreaterThanOrEqual(Math.max(1, nominal / 2));
        expect(d).toBeLessThanOrEqual(nominal);
        expect(Number.isInteger(d)).toBe(true);
      }
    }
  });

  test("is monotonic in the random draw", () => {
    const draws = [0, 0.1, 0.3, 0.6, 0.9, almostOne];
    const delays = draws.map((r) => backoffSeconds(6, policy, () => r));
    expect(delays).toEqual([...delays].sort((a, b) => a - b));
    expect(new Set(delays).size).toBeGreaterThan(1);
  });

  test("never returns less than one whole second (SQS visibility is whole seconds)", () => {
    expect(backoffSeconds(1, { baseSeconds: 0.1, maxSeconds: 10 }, () => 0)).toBe(1);
    expect(backoffSeconds(1, { baseSeconds: 0, maxSeconds: 10 }, () => 0)).toBe(1);
  });

  test("attempt numbers below 1 count as the first attempt", () => {
    expect(backoffSeconds(0, policy, () => almostOne)).toBe(backoffSeconds(1, policy, () => almostOne));
    expect(backoffSeconds(-3, policy, () => almostOne)).toBe(2);
  });

  test("uses Math.random by default and stays in bounds", () => {
    for (let i = 0; i < 200; i++) {
      const d = backoffSeconds(5, policy); // nominal 32
      expect(d).toBeGreaterThanOrEqual(16);
      expect(d).toBeLessThanOrEqual(32);
    }
  });
});
