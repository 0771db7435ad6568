import { ConfigError } from "../errors.ts";

/**
 * How fast the HTTP API's routes may be called, as data (infra/api-gateway.ts sets it on the API's
 * stage, infra/api.ts the token callback's reserved concurrency; check:deploy expects the same).
 *
 * API Gateway's own limit (10 000 requests a second, bursts of 5 000) is the account's, shared by
 * every API in the region, and a function without reserved concurrency draws on the account's
 * unreserved pool, which the workers, the reaper and cron need. `POST /tokens/{id}` is the one
 * route a caller reaches without AWS credentials, so a loop of bad-secret requests must spend only
 * its own small share: the route has a throttle of its own, and its function a reserved
 * concurrency that the throttle can't outrun. Every other route gets the stage's default throttle.
 */
export interface RouteThrottle {
  /** Requests a second, steady. */
  rate: number;
  /** Requests at once (the token bucket's size). */
  burst: number;
}

export interface ApiThrottlePlan {
  /** The stage's default: every IAM-authorized route. */
  routes: RouteThrottle;
  /** `POST /tokens/{id}`, and the reserved concurrency of the function that serves it. */
  tokenCallback: RouteThrottle & { reservedConcurrency: number };
}

/** What a component's `throttle` option may set (infra/skyforge-args.ts); each value left out keeps its default. */
export interface ThrottleOptions {
  routes?: Partial<RouteThrottle>;
  tokenCallback?: Partial<RouteThrottle & { reservedConcurrency: number }>;
}

/**
 * Defaults: the IAM routes a tenth of the account's shared limit, so one stage can't take the
 * region's API Gateway from every other API; the token callback 20 a second in bursts of 30 (a
 * person's click, a webhook's retry), run by at most 50 executions.
 */
export const DEFAULT_API_THROTTLE: ApiThrottlePlan = {
  routes: { rate: 1000, burst: 2000 },
  tokenCallback: { rate: 20, burst: 30, reservedConcurrency: 50 },
};

/**
 * Lambda answers a throttled invocation with 429, which API Gateway passes on to the caller as a
 * 500. So the callback's reserved concurrency must hold a full burst and one more second of
 * arrivals at the rate: a completion runs in well under a second, so the route's own 429 comes
 * first and no caller's input can bring on a 5xx.
 */
export const concurrencyNeeded = (t: RouteThrottle) => t.burst + t.rate;

/** The largest value a setting takes: API Gateway caps a route's rate and burst at the account's. */
const MAX_SETTING = 1_000_000;

function setting(name: string, given: unknown, fallback: number): number {
  if (given === undefined) return fallback;
  if (typeof given !== "number" || !Number.isInteger(given) || given < 1 || given > MAX_SETTING)
    throw new ConfigError(
      `throttle.${name} must be a whole number from 1 to ${MAX_SETTING}, got ${JSON.stringify(given)}`,
    );
  return given;
}

/**
 * The throttles in force: the defaults, with each value the component's `throttle` gave laid over
 * them. A value that is not a whole number above 0, or a callback concurrency under
 * concurrencyNeeded, is a ConfigError naming its option, so the deploy stops before anything is planned.
 */
export function apiThrottlePlan(given: ThrottleOptions = {}): ApiThrottlePlan {
  const d = DEFAULT_API_THROTTLE;
  const c = given.tokenCallback ?? {};
  const tokenCallback = {
    rate: setting("tokenCallback.rate", c.rate, d.tokenCallback.rate),
    burst: setting("tokenCallback.burst", c.burst, d.tokenCallback.burst),
    reservedConcurrency: setting(
      "tokenCallback.reservedConcurrency",
      c.reservedConcurrency,
      d.tokenCallback.reservedConcurrency,
    ),
  };
  const needed = concurrencyNeeded(tokenCallback);
  if (tokenCallback.reservedConcurrency < needed)
    throw new ConfigError(
      `throttle.tokenCallback.reservedConcurrency must be at least the token callback's burst + rate (${tokenCallback.burst} + ${tokenCallback.rate} = ${needed}), got ${tokenCallback.reservedConcurrency}: a throttled function makes API Gateway answer 500`,
    );
  const r = given.routes ?? {};
  return {
    routes: {
      rate: setting("routes.rate", r.rate, d.routes.rate),
      burst: setting("routes.burst", r.burst, d.routes.burst),
    },
    tokenCallback,
  };
}
