import type { Clock } from "../clock.ts";
import type { JobStore } from "../store/job-store.ts";

/**
 * Per-container cache of each queue's cooldown, so checking it costs one read per queue every few
 * seconds rather than one per job. A cooldown this worker sets itself is seen at once.
 */
export class CooldownCache {
  private readonly entries = new Map<string, { until: number; fetchedAt: number }>();
  /** One refresh per queue at a time: records that arrive together share it. */
  private readonly refreshing = new Map<string, Promise<number>>();

  constructor(
    private readonly store: JobStore,
    private readonly clock: Clock,
    private readonly ttlMs = 5_000,
  ) {}

  async cooldownUntil(queue: string): Promise<number> {
    const now = this.clock.now();
    const hit = this.entries.get(queue);
    if (hit && now - hit.fetchedAt < this.ttlMs) return hit.until;
    let refresh = this.refreshing.get(queue);
    if (!refresh) {
      refresh = this.store
        .getQueueState(queue)
        .then((state) => {
          const until = Math.max(state.cooldownUntil ?? 0, this.entries.get(queue)?.until ?? 0);
          this.entries.set(queue, { until, fetchedAt: now });
          return until;
        })
        .finally(() => this.refreshing.delete(queue));
      this.refreshing.set(queue, refresh);
    }
    return refresh;
  }

  note(queue: string, until: number): void {
    const hit = this.entries.get(queue);
    this.entries.set(queue, { until: Math.max(until, hit?.until ?? 0), fetchedAt: this.clock.now() });
  }
}
