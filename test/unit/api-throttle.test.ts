import { describe, expect, test } from "vitest";
import {
  apiThrottlePlan,
  concurrencyNeeded,
  DEFAULT_API_THROTTLE,
} from "../../lib/deploy-plan/api-throttle.ts";
import { ConfigError } from "../../lib/errors.ts";

describe("the API's throttles, as the component's `throttle` option sets them", () => {
  test("with nothing set: every route throttled, the token callback far below the rest, its concurrency reserved", () => {
    const plan = apiThrottlePlan({});
    expect(plan).toEqual(DEFAULT_API_THROTTLE);
    expect(plan.tokenCallback).toEqual({ rate: 20, burst: 30, reservedConcurrency: 50 });
    expect(plan.tokenCallback.rate).toBeLessThan(plan.routes.rate);
    // A burst that passes the route's throttle, and a second more of arrivals, each find an execution.
    expect(plan.tokenCallback.reservedConcurrency).toBeGreaterThanOrEqual(
      concurrencyNeeded(plan.tokenCallback),
    );
  });

  test("each option overrides its own value only", () => {
    const plan = apiThrottlePlan({
      tokenCallback: { rate: 5, burst: 10, reservedConcurrency: 15 },
      routes: { rate: 300 },
    });
    expect(plan).toEqual({
      routes: { rate: 300, burst: DEFAULT_API_THROTTLE.routes.burst },
      tokenCallback: { rate: 5, burst: 10, reservedConcurrency: 15 },
    });
  });

  test.each([0, -3, 2.5, "20", Number.NaN, 1_000_001])("%j is refused, naming the option", (raw) => {
    const given = { tokenCallback: { rate: raw as number } };
    expect(() => apiThrottlePlan(given)).toThrow(ConfigError);
    expect(() => apiThrottlePlan(given)).toThrow(
      `throttle.tokenCallback.rate must be a whole number from 1 to 1000000, got ${JSON.stringify(raw)}`,
    );
  });

  test("a callback concurrency the throttle could outrun is refused: Lambda's throttle would reach callers as a 500", () => {
    expect(() => apiThrottlePlan({ tokenCallback: { reservedConcurrency: 49 } })).toThrow(
      /throttle\.tokenCallback\.reservedConcurrency must be at least the token callback's burst \+ rate \(30 \+ 20 = 50\), got 49/,
    );
    expect(() => apiThrottlePlan({ tokenCallback: { burst: 100, reservedConcurrency: 100 } })).toThrow(
      /\(100 \+ 20 = 120\), got 100/,
    );
  });
});
