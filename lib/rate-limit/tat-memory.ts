/**
 * Buckets whose last tat an instance remembers: a worker serving many tenants' keys forgets the
 * least recently used beyond this (forgetting only costs one request that a known tat would save).
 */
const REMEMBERED_BUCKETS = 10_000;

/**
 * The last tat an instance saw per GCRA bucket (lib/store/rate-limit-ops.ts), by the bucket's
 * partition key. tat only grows, so what is remembered is a lower bound on the real one: enough to
 * pick the write whose condition will hold (idle or busy) and to answer a known denial without a
 * request. One per worker process, per user (the rate limiter's scopes, flow control's rates).
 */
export class TatMemory {
  private readonly lastTat = new Map<string, number>();

  get(bucket: string): number | undefined {
    return this.lastTat.get(bucket);
  }

  /**
   * Concurrent answers arrive out of order, so keep the highest tat seen. A missing item (a wiped
   * table) voids what we knew, or the idle form would never be tried again.
   */
  remember(bucket: string, tat: number | undefined): void {
    const before = this.lastTat.get(bucket);
    // Deleted first, so the Map's insertion order keeps the least recently used bucket first.
    this.lastTat.delete(bucket);
    if (tat === undefined) return;
    this.lastTat.set(bucket, Math.max(tat, before ?? tat));
    if (this.lastTat.size > REMEMBERED_BUCKETS) {
      const oldest = this.lastTat.keys().next().value;
      if (oldest !== undefined) this.lastTat.delete(oldest);
    }
  }
}
