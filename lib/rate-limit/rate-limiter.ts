import { type RateLimitScope, validateRateLimitScopes } from "../declarations/rate-limit-scope.ts";
import { UsageError } from "../errors.ts";
import type { RateLimitAnswer } from "../job/kind.ts";
import type { StoreContext } from "../store/context.ts";
import { takeTokens } from "../store/rate-limit-ops.ts";
import { assertTokenCount, emissionInterval, gcraDecision, gcraLimit } from "./gcra.ts";

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

/**
 * Cluster-wide token buckets (GCRA, one DynamoDB item per scope). A grant is one conditional write.
 * Each instance remembers the last tat it saw per scope; tat only grows, so that is a lower bound on
 * the real one, and a request it already denies is answered without a request (a throttled hot loop
 * costs nothing). One instance per worker process.
 */
export class RateLimiter {
  private readonly store: StoreContext;
  private readonly scopes: ReadonlyMap<string, RateLimitScope>;
  private readonly lastTat = new Map<string, number>();

  constructor({ store, scopes }: RateLimiterDeps) {
    validateRateLimitScopes(scopes);
    this.store = store;
    this.scopes = new Map(scopes.map((s) => [s.scope, s]));
  }

  /** Takes `n` tokens from `scope`, or says how long until they would be there. */
  async acquire(scope: string, n = 1): Promise<RateLimitAnswer> {
    const declared = this.declared(scope);
    assertTokenCount(n, declared);
    const cost = n * emissionInterval(declared);
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const now = this.store.clock.now();
      const known = this.lastTat.get(scope);
      const decision = gcraDecision(known, now, n, declared);
      if (!decision.allowed) return { granted: false, waitMs: decision.waitMs };
      const result = await takeTokens(this.store, scope, {
        form: known === undefined || known < now ? "idle" : "busy",
        now,
        cost,
        limit: gcraLimit(now, n, declared),
      });
      this.remember(scope, result.tat);
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

  /**
   * Concurrent answers arrive out of order, so keep the highest tat seen. A missing item (a wiped
   * table) voids what we knew, or the idle form would never be tried again.
   */
  private remember(scope: string, tat: number | undefined): void {
    if (tat === undefined) this.lastTat.delete(scope);
    else this.lastTat.set(scope, Math.max(tat, this.lastTat.get(scope) ?? tat));
  }
}
