import type { Clock } from "../../lib/clock.ts";

/**
 * Real time plus a movable offset: SQS visibility in the emulator runs on the wall clock, while
 * lease expiry is decided by this clock, so a test can expire a lease without waiting for it.
 */
export class OffsetClock implements Clock {
  private offset = 0;
  now(): number {
    return Date.now() + this.offset;
  }
  advance(ms: number): void {
    this.offset += ms;
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
