import type { RateLimitScope } from "../declarations/rate-limit-scope.ts";
import { UsageError } from "../errors.ts";

/**
 * GCRA (generic cell rate algorithm): a token bucket kept as one number, the "theoretical arrival
 * time" `tat` (epoch ms). The bucket is full when tat <= now; each token pushes tat one emission
 * interval further; a request fits while tat stays within `capacity` intervals of now. One number
 * means a grant is one conditional write with no read.
 */

export type GcraDecision = { allowed: true; newTat: number } | { allowed: false; waitMs: number };

/**
 * Fractional intervals (1000 / 3 ms) are summed by DynamoDB in exact decimal but compared against
 * limits computed in floats, where one ulp at epoch-ms magnitude is ~2e-4 ms. The two could disagree
 * by a hair about a token due exactly now; 0.01 ms of slack settles it in the caller's favour and is
 * far below any rate a caller can observe.
 */
export const TAT_SLACK_MS = 0.01;

/** Milliseconds one token takes to refill. */
export const emissionInterval = (scope: RateLimitScope): number => 1000 / scope.refillPerSecond;

/** Throws for a request no bucket state could ever grant: a programming error, not a throttle. */
export function assertTokenCount(n: number, scope: RateLimitScope): void {
  if (!Number.isInteger(n) || n < 1) {
    throw new UsageError(`rate limit "${scope.scope}": token count must be a positive integer, got ${n}`);
  }
  if (n > scope.capacity) {
    throw new UsageError(
      `rate limit "${scope.scope}": asked for ${n} tokens but capacity is ${scope.capacity}; it could never be granted`,
    );
  }
}

/** The latest tat at which `n` tokens still fit at `now`. */
export function gcraLimit(now: number, n: number, scope: RateLimitScope): number {
  return now + (scope.capacity - n) * emissionInterval(scope) + TAT_SLACK_MS;
}

/**
 * Decides one request for `n` tokens against a bucket whose tat is `tat` (undefined: never used,
 * so full). Allowed: the tat to store. Denied: how long until the same request would fit.
 */
export function gcraDecision(
  tat: number | undefined,
  now: number,
  n: number,
  scope: RateLimitScope,
): GcraDecision {
  assertTokenCount(n, scope);
  const limit = gcraLimit(now, n, scope);
  if (tat !== undefined && tat > limit) return { allowed: false, waitMs: Math.ceil(tat - limit) };
  return { allowed: true, newTat: Math.max(tat ?? now, now) + n * emissionInterval(scope) };
}
