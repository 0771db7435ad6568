import type { BackoffPolicy } from "../job/kind.ts";

/**
 * Exponential backoff with equal jitter, in whole seconds (SQS visibility is whole seconds):
 * half of base·2^(attempt-1) (capped at max) is fixed, the other half random, so retries of a burst
 * spread out but never come back sooner than half the nominal delay.
 */
export function backoffSeconds(
  attempt: number,
  policy: BackoffPolicy,
  random: () => number = Math.random,
): number {
  const nominal = Math.min(policy.maxSeconds, policy.baseSeconds * 2 ** Math.max(0, attempt - 1));
  const half = nominal / 2;
  return Math.max(1, Math.ceil(half + random() * half));
}
