import type { WarmChild } from "./warm-child.ts";

export interface Capacity {
  soft: number;
  hard: number;
}

/**
 * The warm children of one kind. Children start on demand up to `soft`, and up to `hard` only for
 * critical work. A child that dies (or is killed) leaves the group at once; its place is refilled
 * lazily, on the next take. A release above `soft` culls the child unless critical work is waiting.
 */
export class ChildGroup {
  private readonly idle: WarmChild[] = [];
  private readonly busy = new Set<WarmChild>();
  /** Deaths nobody asked for; the spawns that refill them count as respawns. */
  private unplannedDeaths = 0;
  private readonly retiring = new Set<WarmChild>();
  respawns = 0;

  constructor(
    readonly kind: string,
    readonly capacity: Capacity,
    private readonly spawnChild: (onExit: (child: WarmChild) => void) => WarmChild,
  ) {}

  get size(): number {
    return this.idle.length + this.busy.size;
  }

  stats(): { busy: number; idle: number } {
    return { busy: this.busy.size, idle: this.idle.length };
  }

  /** A child for one job: an idle one, or a new one while under the cap; undefined when full. */
  take(critical: boolean): WarmChild | undefined {
    let warm = this.idle.pop();
    // A killed child whose exit is not reported yet is dropped here, not handed a job.
    while (warm && !warm.alive) warm = this.idle.pop();
    if (warm) {
      this.busy.add(warm);
      return warm;
    }
    const cap = critical ? this.capacity.hard : this.capacity.soft;
    if (this.size >= cap) return undefined;
    const child = this.spawn();
    this.busy.add(child);
    return child;
  }

  /** A fresh child in place of a busy one that died mid-job, so that job runs again before any other. */
  replace(dead: WarmChild): WarmChild {
    this.busy.delete(dead);
    dead.kill();
    const child = this.spawn();
    this.busy.add(child);
    return child;
  }

  /** Hands a child back after a job. `keepAboveSoft` while critical work waits for it. */
  release(child: WarmChild, keepAboveSoft: boolean): void {
    if (!this.busy.delete(child)) return;
    if (!child.alive) return;
    if (!keepAboveSoft && this.size >= this.capacity.soft) {
      this.retire(child);
      return;
    }
    this.idle.push(child);
  }

  /** Stops every child: EOF first, a kill after `graceMs`. */
  async stopAll(graceMs: number): Promise<void> {
    const all = [...this.idle, ...this.busy];
    this.idle.length = 0;
    this.busy.clear();
    for (const c of all) this.retiring.add(c);
    await Promise.all(all.map((c) => c.stop(graceMs)));
  }

  private spawn(): WarmChild {
    if (this.unplannedDeaths > 0) {
      this.unplannedDeaths--;
      this.respawns++;
    }
    return this.spawnChild((dead) => this.onExit(dead));
  }

  private retire(child: WarmChild): void {
    this.retiring.add(child);
    void child.stop(1000);
  }

  private onExit(child: WarmChild): void {
    if (this.retiring.delete(child)) return;
    const at = this.idle.indexOf(child);
    if (at >= 0) this.idle.splice(at, 1);
    this.unplannedDeaths++;
  }
}
