import type { Clock } from "../../lib/clock.ts";

/**
 * Real time plus a movable offset: SQS visibility in the emulator runs on the wall clock, while
 * lease expiry is decided by this clock, so a test can expire a lease without waiting for it.
 */
export class OffsetClock implements Clock {
  protected offset = 0;
  now(): number {
    return Date.now() + this.offset;
  }
  advance(ms: number): void {
    this.offset += ms;
  }
}

/**
 * An OffsetClock that a test can hold still: while held, it moves only by `advance`, so a sequence
 * of enqueues sees exactly the time the test gives it, however long the machine takes; released, it
 * runs on from there with the wall clock (for the emulators' real delays).
 */
export class HoldableClock extends OffsetClock {
  private held: number | undefined;
  override now(): number {
    return this.held ?? super.now();
  }
  override advance(ms: number): void {
    if (this.held === undefined) super.advance(ms);
    else this.held += ms;
  }
  hold(): void {
    this.held = this.now();
  }
  release(): void {
    if (this.held === undefined) return;
    this.offset = this.held - Date.now();
    this.held = undefined;
  }
}

/** A clock tests can move by hand. */
export class ManualClock implements Clock {
  private current: number;
  constructor(start = Date.parse("2026-01-01T00:00:00Z")) {
    this.current = start;
  }
  now(): number {
    return this.current;
  }
  advance(ms: number): void {
    this.current += ms;
  }
  set(ms: number): void {
    this.current = ms;
  }
}
