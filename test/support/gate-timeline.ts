import { vi } from "vitest";
import type { JobMessage } from "../../lib/transport/job-message.ts";
import type { ManualClock } from "./clock.ts";
import type { Harness } from "./engine-harness.ts";

/**
 * The deliveries of a timeline played through the real flow gate on a manual clock (the guide's
 * timelines, docs/guide/flow-control.md): every message the engine sends (the enqueue, the gate, a
 * hand-over) through the real transport is due after its delay, and `runUntil` delivers each due
 * one at its own time, in the order they were sent, to `deliver` (which may hand one back for later).
 */
export function gateTimeline(
  h: Harness,
  clock: ManualClock,
  deliver: (msg: JobMessage) => Promise<void>,
): { runUntil(until: number): Promise<void>; later(at: number, msg: JobMessage): void } {
  const sends = vi.spyOn(h.engine.transport, "send");
  const pending: { at: number; msg: JobMessage }[] = [];
  const takeSends = () => {
    for (const [{ message, delaySeconds }] of sends.mock.calls.splice(0))
      pending.push({ at: clock.now() + delaySeconds * 1000, msg: message });
  };
  const deliverDue = async () => {
    for (;;) {
      takeSends();
      const i = pending.findIndex((p) => p.at <= clock.now());
      if (i < 0) return;
      await deliver((pending.splice(i, 1)[0] as { msg: JobMessage }).msg);
    }
  };
  return {
    later: (at, msg) => pending.push({ at, msg }),
    // The deliveries due up to `until`, each at its own time.
    runUntil: async (until) => {
      for (;;) {
        await deliverDue();
        const next = Math.min(...pending.map((p) => p.at));
        if (!Number.isFinite(next) || next > until) break;
        clock.advance(next - clock.now());
      }
      if (until > clock.now() && Number.isFinite(until)) clock.advance(until - clock.now());
      await deliverDue();
    },
  };
}

/** A time and a name, in time order then name order (deliveries at one instant may come in any order). */
export const inOrder = (list: [number, string][]) =>
  list
    .sort((a, b) => a[0] - b[0] || a[1].localeCompare(b[1]))
    .map(([at, what]) => `${at} ${what}`)
    .join(", ");
