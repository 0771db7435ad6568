import { TransientError } from "../errors.ts";
import type { WarmChild } from "./warm-child.ts";

export interface Capacity {
  soft: number;
  hard: number;
}

/**
 * The warm children of one kind. Children start on demand up to `soft`, and up to `hard` only for
 * critical work. A child that dies (or is killed) leaves at once; its place is refilled lazily, on
 * the next take. A release above `soft` culls the child unless critical work is waiting.
 * (Named for what it holds, a kind's children: "group" means a job group in this project, §15.)
 */
export class KindChildren {
  private readonly idle: WarmChild[] = [];
  private readonly busy = new Set<WarmChild>();
  /** Children that died without being asked to, not refilled yet; the spawns that refill them count as respawns. */
  private readonly unrefilled = new Set<WarmChild>();
  /** Children replaced before their exit was reported: the replacement already counted them. */
  private readonly replaced = new Set<WarmChild>();
  private readonly exitReported = new WeakSet<WarmChild>();
  private readonly retiring = new Set<WarmChild>();
  /** After killAll: the pool is going away, no child starts again. */
  private closed = false;
  respawns = 0;

  readonly kind: string;
  readonly capacity: Capacity;
  private readonly spawnChild: (onExit: (child: WarmChild) => void) => WarmChild;

  constructor(
    kind: string,
    capacity: Capacity,
    spawnChild: (onExit: (child: WarmChild) => void) => WarmChild,
  ) {
    this.kind = kind;
    this.capacity = capacity;
    this.spawnChild = spawnChild;
  }

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
    if (this.closed || this.size >= cap) return undefined;
    const child = this.spawn();
    this.busy.add(child);
    return child;
  }

  /** A fresh child in place of a busy one that died mid-job, so that job runs again before any other. */
  replace(dead: WarmChild): WarmChild {
    this.busy.delete(dead);
    dead.kill();
    if (this.closed) throw new TransientError(`the pool is going away; no new child for kind ${this.kind}`);
    // The job can find its child dead before the exit is reported (it was killed between the take
    // and the request): the death is counted once, by whichever comes first.
    if (this.unrefilled.delete(dead)) this.respawns++;
    else if (!this.exitReported.has(dead)) {
      this.replaced.add(dead);
      this.respawns++;
    }
    const child = this.spawnChild((exited) => this.onExit(exited));
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

  /** SIGKILLs every child now, synchronously: the pool process is exiting without a drain. */
  killAll(): void {
    this.closed = true;
    for (const c of [...this.idle, ...this.busy, ...this.retiring]) {
      this.retiring.add(c);
      c.kill();
    }
  }

  private spawn(): WarmChild {
    if (this.closed) throw new TransientError(`the pool is going away; no new child for kind ${this.kind}`);
    const refills = this.unrefilled.values().next();
    if (!refills.done) {
      this.unrefilled.delete(refills.value);
      this.respawns++;
    }
    return this.spawnChild((dead) => this.onExit(dead));
  }

  private retire(child: WarmChild): void {
    this.retiring.add(child);
    void child.stop(1000);
  }

  private onExit(child: WarmChild): void {
    this.exitReported.add(child);
    if (this.retiring.delete(child) || this.replaced.delete(child)) return;
    const at = this.idle.indexOf(child);
    if (at >= 0) this.idle.splice(at, 1);
    this.unrefilled.add(child);
  }
}
