import type { Clock } from "../clock.ts";
import type { JobStore } from "../store/job-store.ts";

/**
 * Per-container cache of each queue's cooldown, so checking it costs one read per queue every few
 * seconds rather than one per job. A cooldown this worker sets itself is seen at once.
 */
export class CooldownCache {
  private readonly entries = new Map<string, { until: number; fetchedAt: number }>();

  constructor(
    private readonly store: JobStore,
    private readonly clock: Clock,
    private readonly ttlMs = 5_000,
  ) {}

  async cooldownUntil(queue: string): Promise<number> {
    const now = this.clock.now();
    const hit = this.entries.get(queue);
    if (hit && now - hit.fetchedAt < this.ttlMs) return hit.until;
    const state = await this.store.getQueueState(queue);
    const until = state.cooldownUntil ?? 0;
    this.entries.set(queue, { until, fetchedAt: now });
    return until;
  }

  note(queue: string, until: number): void {
    const hit = this.entries.get(queue);
    this.entries.set(queue, { until: Math.max(until, hit?.until ?? 0), fetchedAt: this.clock.now() });
  }
}
