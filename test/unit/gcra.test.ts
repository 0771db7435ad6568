import { describe, expect, it } from "vitest";
import { type RateLimitScope, validateRateLimitScopes } from "../../lib/declarations/rate-limit-scope.ts";
import { emissionInterval, gcraDecision, gcraLimit, TAT_SLACK_MS } from "../../lib/rate-limit/gcra.ts";

const NOW = Date.parse("2026-01-01T00:00:00Z");
const partner: RateLimitScope = { scope: "partner-api", capacity: 5, refillPerSecond: 2 };
const thirds: RateLimitScope = { scope: "thirds", capacity: 3, refillPerSecond: 3 };

/** Runs requests of one token at `now` against `tat` until one is denied; returns grants and the end state. */
function drain(tat: number | undefined, now: number, scope: RateLimitScope) {
  let granted = 0;
  for (;;) {
    const d = gcraDecision(tat, now, 1, scope);
    if (!d.allowed) return { granted, tat, waitMs: d.waitMs };
    granted += 1;
    tat = d.newTat;
  }
}

describe("gcraDecision", () => {
  it("a never-used bucket grants its full burst, then denies for one interval", () => {
    const r = drain(undefined, NOW, partner);
    expect(r.granted).toBe(5);
    expect(r.tat).toBe(NOW + 5 * 500);
    expect(r.waitMs).toBe(500);
  });

  it("the wait is exact: one ms early is denied, on time is granted", () => {
    const { tat, waitMs } = drain(undefined, NOW, partner);
    expect(gcraDecision(tat, NOW + waitMs - 1, 1, partner)).toEqual({ allowed: false, waitMs: 1 });
    expect(gcraDecision(tat, NOW + waitMs, 1, partner)).toEqual({ allowed: true, newTat: (tat ?? 0) + 500 });
  });

  it("a tat in the past counts as a full bucket: the new tat starts from now", () => {
    expect(gcraDecision(NOW - 60_000, NOW, 1, partner)).toEqual({ allowed: true, newTat: NOW + 500 });
  });

  it("refills one token per interval, never beyond capacity", () => {
    const { tat } = drain(undefined, NOW, partner);
    expect(drain(tat, NOW + 1_000, partner).granted).toBe(2);
    expect(drain(tat, NOW + 1_499, partner).granted).toBe(2);
    expect(drain(tat, NOW + 1_500, partner).granted).toBe(3);
    expect(drain(tat, NOW + 3_600_000, partner).granted).toBe(5);
  });

  it("several tokens at once: allowed only while all of them fit; the wait covers all of them", () => {
    expect(gcraDecision(undefined, NOW, 5, partner)).toEqual({ allowed: true, newTat: NOW + 2_500 });
    const tat = NOW + 1_000; // 3 tokens left
    expect(gcraDecision(tat, NOW, 3, partner)).toEqual({ allowed: true, newTat: NOW + 2_500 });
    expect(gcraDecision(tat, NOW, 4, partner)).toEqual({ allowed: false, waitMs: 500 });
    expect(gcraDecision(tat, NOW + 500, 4, partner).allowed).toBe(true);
  });

  it("fractional intervals: a token due exactly now is granted despite float rounding", () => {
    expect(emissionInterval(thirds)).toBeCloseTo(333.333, 3);
    let tat: number | undefined;
    let granted = 0;
    // 600 seconds in steps of 1/3 s: exactly one token each step after the initial burst.
    for (let step = 0; step <= 1_800; step++) {
      const now = NOW + Math.round((step * 1000) / 3);
      const r = drain(tat, now, thirds);
      granted += r.granted;
      tat = r.tat;
    }
    expect(granted).toBe(3 + 1_800);
  });

  it("fractional refill accumulates: 2.5 tokens per second gives 5 per 2 s", () => {
    const scope: RateLimitScope = { scope: "half", capacity: 1, refillPerSecond: 2.5 };
    let tat: number | undefined;
    let granted = 0;
    for (let ms = 0; ms <= 10_000; ms += 100) {
      const r = drain(tat, NOW + ms, scope);
      granted += r.granted;
      tat = r.tat;
    }
    expect(granted).toBe(1 + 25);
  });

  it("the limit carries a tiny slack and the wait is always at least 1 ms", () => {
    expect(gcraLimit(NOW, 1, partner)).toBe(NOW + 2_000 + TAT_SLACK_MS);
    expect(gcraDecision(NOW + 2_500.02, NOW, 1, partner)).toEqual({ allowed: false, waitMs: 501 });
    expect(gcraDecision(NOW + 2_000.02, NOW, 1, partner)).toEqual({ allowed: false, waitMs: 1 });
  });

  it("asking for more than capacity (or a non-positive count) is a programming error", () => {
    expect(() => gcraDecision(undefined, NOW, 6, partner)).toThrow(/asked for 6 tokens but capacity is 5/);
    expect(() => gcraDecision(undefined, NOW, 0, partner)).toThrow(/positive integer/);
    expect(() => gcraDecision(undefined, NOW, 1.5, partner)).toThrow(/positive integer/);
  });
});

describe("validateRateLimitScopes", () => {
  it("accepts the declared scopes", () => {
    expect(() => validateRateLimitScopes([partner, thirds])).not.toThrow();
  });

  it.each([
    [[{ ...partner, scope: "Partner" }], /name must match/],
    [[{ ...partner, scope: "" }], /name must match/],
    [[{ ...partner, scope: `a${"b".repeat(64)}` }], /name must match/],
    [[partner, { ...thirds, scope: "partner-api" }], /declared twice/],
    [[{ ...partner, capacity: 0 }], /capacity must be a positive integer/],
    [[{ ...partner, capacity: 2.5 }], /capacity must be a positive integer/],
    [[{ ...partner, refillPerSecond: 0 }], /refillPerSecond must be a positive number/],
    [[{ ...partner, refillPerSecond: Number.POSITIVE_INFINITY }], /refillPerSecond/],
  ])("rejects %j", (list, message) => {
    expect(() => validateRateLimitScopes(list)).toThrow(message);
  });
});
