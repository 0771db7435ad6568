import { describe, expect, test } from "vitest";
import {
  apiThrottlePlan,
  concurrencyNeeded,
  DEFAULT_API_THROTTLE,
  THROTTLE_SETTINGS,
} from "../../lib/deploy-plan/api-throttle.ts";
import { ConfigError } from "../../lib/errors.ts";

describe("the API's throttles, as the deployer sets them", () => {
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

  test("each setting overrides its own value only", () => {
    const plan = apiThrottlePlan({
      [THROTTLE_SETTINGS.callbackRate]: "5",
      [THROTTLE_SETTINGS.callbackBurst]: "10",
      [THROTTLE_SETTINGS.callbackConcurrency]: "15",
      [THROTTLE_SETTINGS.routesRate]: "300",
      [THROTTLE_SETTINGS.routesBurst]: "",
    });
    expect(plan).toEqual({
      routes: { rate: 300, burst: DEFAULT_API_THROTTLE.routes.burst },
      tokenCallback: { rate: 5, burst: 10, reservedConcurrency: 15 },
    });
  });

  test.each(["0", "-3", "2.5", "20rps", " 20", "1e3", "1000001"])(
    "%j is refused, naming the setting",
    (raw) => {
      expect(() => apiThrottlePlan({ [THROTTLE_SETTINGS.callbackRate]: raw })).toThrow(ConfigError);
      expect(() => apiThrottlePlan({ [THROTTLE_SETTINGS.callbackRate]: raw })).toThrow(
        `SKYFORGE_TOKEN_CALLBACK_RATE_LIMIT must be a whole number from 1 to 1000000, got "${raw}"`,
      );
    },
  );

  test("a callback concurrency the throttle could outrun is refused: Lambda's throttle would reach callers as a 500", () => {
    expect(() => apiThrottlePlan({ [THROTTLE_SETTINGS.callbackConcurrency]: "49" })).toThrow(
      /SKYFORGE_TOKEN_CALLBACK_CONCURRENCY must be at least the token callback's burst \+ rate \(30 \+ 20 = 50\), got 49/,
    );
    expect(() =>
      apiThrottlePlan({
        [THROTTLE_SETTINGS.callbackBurst]: "100",
        [THROTTLE_SETTINGS.callbackConcurrency]: "100",
      }),
    ).toThrow(/\(100 \+ 20 = 120\), got 100/);
  });
});
