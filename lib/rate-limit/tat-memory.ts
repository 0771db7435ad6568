import { rateLimitKey } from "../store/keys.ts";

/**
 * Buckets whose last tat an instance remembers: a worker serving many tenants' keys forgets the
 * least recently used beyond this (forgetting only costs one request that a known tat would save).
 */
const REMEMBERED_BUCKETS = 10_000;

/** A GCRA bucket: a scope's, or a key's within it (lib/store/rate-limit-ops.ts). */
type Bucket = { scope: string; key?: string };
/** Remembered under the bucket's own partition key: one name for one bucket. */
const nameOf = (bucket: Bucket) => rateLimitKey(bucket.scope, bucket.key).pk;

/**
 * The last tat an instance saw per GCRA bucket (lib/store/rate-limit-ops.ts). tat only grows, so what is remembered is a lower bound on the real one: enough to
 * pick the write whose condition will hold (idle or busy) and to answer a known denial without a
 * request. One per worker process, per user (the rate limiter's scopes, flow control's rates).
 */
export class TatMemory {
  private readonly lastTat = new Map<string, number>();

  get(bucket: Bucket): number | undefined {
    return this.lastTat.get(nameOf(bucket));
  }

  /**
   * Concurrent answers arrive out of order, so keep the highest tat seen. A missing item (a wiped
   * table) voids what we knew, or the idle form would never be tried again.
   */
  remember(bucket: Bucket, tat: number | undefined): void {
    const name = nameOf(bucket);
    const before = this.lastTat.get(name);
    // Deleted first, so the Map's insertion order keeps the least recently used bucket first.
    this.lastTat.delete(name);
    if (tat === undefined) return;
    this.lastTat.set(name, Math.max(tat, before ?? tat));
    if (this.lastTat.size > REMEMBERED_BUCKETS) {
      const oldest = this.lastTat.keys().next().value;
      if (oldest !== undefined) this.lastTat.delete(oldest);
    }
  }
}
