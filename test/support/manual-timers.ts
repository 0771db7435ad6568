import type { Timers } from "../../lib/batching/key-batches.ts";

/** Timers on a manual clock: `advance` fires what falls due, in order. */
export class ManualTimers implements Timers {
  now = 0;
  private pending: { at: number; fire: () => void; live: boolean }[] = [];
  after(ms: number, fire: () => void) {
    const t = { at: this.now + ms, fire, live: true };
    this.pending.push(t);
    return () => {
      t.live = false;
    };
  }
  advance(ms: number) {
    const until = this.now + ms;
    for (;;) {
      const due = this.pending.filter((t) => t.live && t.at <= until).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      due.live = false;
      this.now = due.at;
      due.fire();
    }
    this.now = until;
  }
}
