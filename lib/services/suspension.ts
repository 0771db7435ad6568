import { MAX_DELAY_SECONDS } from "../limits.ts";
import type { StepRecord, WaitingRecord } from "../store/step-record.ts";

/**
 * mapExists: whether the job item has a steps map yet (its first entry writes the map, and with it
 * `version`, the kind's version the run runs, as the job's).
 */
export type SuspendStep = { name: string; record: StepRecord; mapExists: boolean; version?: string };

/**
 * An event wait's pointer, and the time (ms) from which it takes buffered events; in a race, the
 * branch it is (its step is the race's name).
 */
export type SuspendWaiter = { event: string; match: string; step: string; since: number; branch?: string };

/** A recorded step whose body is a claims object: its name, the object's key, and when it was recorded. */
export type StoredBody = { name: string; o: string; t: number };

/**
 * A durable run's decision to end and wait (docs/architecture.md §22): what the suspend writes, and
 * what happens next. A class, so the run supervisor can tell it from any value a handler returns.
 * Part of the engine's contract: the durable service (lib/durable/) makes it, the delivery pipeline
 * writes it under the run's fence and hands it back to the service around that write.
 */
export class Suspension {
  readonly waiting: WaitingRecord;
  /** The sleep's or event wait's record, written by the suspend itself (absent when recorded before). */
  readonly step: SuspendStep | undefined;
  /**
   * An event wait's pointer, written before the suspend (lib/store/event-waiter-ops.ts); `since`: the
   * time from which the wait takes events kept for a lookback (lib/durable/event-lookback.ts).
   */
  readonly waiter: SuspendWaiter | undefined;
  /** The job's recorded bodies in the claims bucket, which the wait must not outlast (§22, Retention). */
  readonly bodies: readonly StoredBody[];
  /** A race's event branches' pointers (`ctx.waitForAny`), written as `waiter` is. */
  readonly raceWaiters: readonly SuspendWaiter[];

  constructor(
    waiting: WaitingRecord,
    step?: SuspendStep,
    waiter?: SuspendWaiter,
    bodies: readonly StoredBody[] = [],
    raceWaiters: readonly SuspendWaiter[] = [],
  ) {
    this.raceWaiters = raceWaiters;
    this.waiting = waiting;
    this.step = step;
    this.waiter = waiter;
    this.bodies = bodies;
  }

  /** A sleep that ends within SQS's longest delay wakes by a delayed message; longer waits by the reaper. */
  wakesByMessage(now: number): boolean {
    return this.waiting.for === "sleep" && this.waiting.until - now <= MAX_DELAY_SECONDS * 1000;
  }

  /** The same suspension, with the job's stored bodies the run knows of. */
  withBodies(bodies: readonly StoredBody[]): Suspension {
    return new Suspension(this.waiting, this.step, this.waiter, bodies, this.raceWaiters);
  }

  /** Every event pointer the wait writes before its suspend. */
  waiters(): readonly SuspendWaiter[] {
    return this.waiter ? [this.waiter, ...this.raceWaiters] : this.raceWaiters;
  }
}
