import { type RateLimitScope, validateRateLimitScopes } from "../declarations/rate-limit-scope.ts";
import { UsageError } from "../errors.ts";
import type { RateLimitAnswer, RateLimitTake } from "../job/kind.ts";
import type { StoreContext } from "../store/context.ts";
import { formFor, takeTokens } from "../store/rate-limit-ops.ts";
import { assertTokenCount, emissionInterval, gcraDecision, gcraLimit } from "./gcra.ts";
import { TatMemory } from "./tat-memory.ts";

export interface RateLimiterDeps {
  /** The table holding one bucket item per scope; its clock is the limiter's "now". */
  store: StoreContext;
  /** The app's declared scopes. */
  scopes: readonly RateLimitScope[];
}

/**
 * Only a lost race in every attempt gets here: other workers kept moving the bucket between our
 * read of it and our write. Tokens may well be left, so the caller should come back soon.
 */
const MAX_ATTEMPTS = 5;
const CONTENTION_WAIT_MS = 25;
/** A key names a DynamoDB item: as long as a flow key may be. */
const MAX_KEY_CHARS = 256;
/**
 * Cluster-wide token buckets (GCRA, one DynamoDB item per scope, and one per (scope, key) for a
 * keyed take, each with the scope's capacity and refill). A grant is one conditional write.
 * Each instance remembers the last tat it saw per bucket; tat only grows, so that is a lower bound on
 * the real one, and a request it already denies is answered without a request (a throttled hot loop
 * costs nothing). One instance per worker process.
 */
export class RateLimiter {
  private readonly store: StoreContext;
  private readonly scopes: ReadonlyMap<string, RateLimitScope>;
  private readonly tats = new TatMemory();

  constructor({ store, scopes }: RateLimiterDeps) {
    validateRateLimitScopes(scopes);
    this.store = store;
    this.scopes = new Map(scopes.map((s) => [s.scope, s]));
  }

  /**
   * Takes tokens from `scope` (its own bucket, or `take.key`'s), or says how long until they would
   * be there. `take` is the token count, or `{ tokens, key }`.
   */
  async acquire(scope: string, take: number | RateLimitTake = 1): Promise<RateLimitAnswer> {
    const declared = this.declared(scope);
    const { tokens: n = 1, key } = typeof take === "number" ? { tokens: take } : take;
    assertTokenCount(n, declared);
    if (key !== undefined) assertKey(scope, key);
    const bucket = key === undefined ? { scope } : { scope, key };
    const cost = n * emissionInterval(declared);
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const now = this.store.clock.now();
      const known = this.tats.get(bucket);
      const decision = gcraDecision(known, now, n, declared);
      if (!decision.allowed) return { granted: false, waitMs: decision.waitMs };
      const result = await takeTokens(this.store, bucket, {
        form: formFor(known, now),
        now,
        cost,
        limit: gcraLimit(now, n, declared),
      });
      this.tats.remember(bucket, result.tat);
      if (result.taken) return { granted: true };
    }
    return { granted: false, waitMs: CONTENTION_WAIT_MS };
  }

  private declared(scope: string): RateLimitScope {
    const found = this.scopes.get(scope);
    if (found) return found;
    const names = [...this.scopes.keys()].join(", ") || "(none)";
    throw new UsageError(`unknown rate-limit scope "${scope}"; declared scopes: ${names}`);
  }
}

/** A key becomes part of a DynamoDB key: a non-empty string, at most MAX_KEY_CHARS characters. */
function assertKey(scope: string, key: unknown): void {
  if (typeof key === "string" && key.length > 0 && key.length <= MAX_KEY_CHARS) return;
  const shown = typeof key === "string" ? `${key.length} characters` : typeof key;
  throw new UsageError(
    `rate-limit scope "${scope}": key must be a non-empty string of at most ${MAX_KEY_CHARS} characters, got ${shown}`,
  );
}
