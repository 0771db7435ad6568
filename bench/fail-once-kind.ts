import type { AnyKind } from "../lib/job/kind.ts";

/** The bench's `--fail-once` kind (as app/kinds/flaky.ts, but wrapping any kind and its payload). */
export const FAIL_ONCE_KIND = "bench-fail-once";

/**
 * `base` under another name, failing its first attempt and running `base`'s handler on the next:
 * every job costs one failed attempt, one backoff and one retry. Same payload schema, queue, timeout,
 * backoff (and lane, when `base` declares one); at least 2 attempts, so the retry can happen.
 */
export function failOnceKind(base: AnyKind): AnyKind {
  return {
    ...base,
    name: FAIL_ONCE_KIND,
    maxAttempts: Math.max(2, base.maxAttempts),
    handler: async (payload, ctx) => {
      if (ctx.attempt === 1) throw new Error(`${FAIL_ONCE_KIND}: the first attempt fails on purpose`);
      return base.handler(payload, ctx);
    },
  };
}
