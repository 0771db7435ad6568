import type { Clock } from "../clock.ts";
import type { QueueState } from "../store/queue-state.ts";

/**
 * Per-container cache of each queue's runtime item (cooldown, pause, setting overrides), so checking
 * it costs one read per queue every few seconds rather than one per job. A cooldown this worker sets
 * itself is seen at once.
 */
export class QueueStateCache {
  private readonly entries = new Map<string, { state: QueueState; fetchedAt: number }>();
  /** One refresh per queue at a time: records that arrive together share it. */
  private readonly refreshing = new Map<string, Promise<QueueState>>();

  private readonly read: (queue: string) => Promise<QueueState>;
  private readonly clock: Clock;
  private readonly ttlMs;

  constructor(read: (queue: string) => Promise<QueueState>, clock: Clock, ttlMs = 5_000) {
    this.read = read;
    this.clock = clock;
    this.ttlMs = ttlMs;
  }

  async get(queue: string): Promise<QueueState> {
    const now = this.clock.now();
    const hit = this.entries.get(queue);
    if (hit && now - hit.fetchedAt < this.ttlMs) return hit.state;
    let refresh = this.refreshing.get(queue);
    if (!refresh) {
      refresh = this.read(queue)
        .then((fresh) => {
          const cooldownUntil = Math.max(
            fresh.cooldownUntil ?? 0,
            this.entries.get(queue)?.state.cooldownUntil ?? 0,
          );
          const state = { ...fresh, cooldownUntil };
          this.entries.set(queue, { state, fetchedAt: now });
          return state;
        })
        .finally(() => this.refreshing.delete(queue));
      this.refreshing.set(queue, refresh);
    }
    return refresh;
  }

  noteCooldown(queue: string, until: number): void {
    const hit = this.entries.get(queue);
    const state = hit?.state ?? {};
    this.entries.set(queue, {
      state: { ...state, cooldownUntil: Math.max(until, state.cooldownUntil ?? 0) },
      fetchedAt: hit?.fetchedAt ?? 0,
    });
  }
}
