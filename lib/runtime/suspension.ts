import type { StepRecord, WaitingRecord } from "../store/step-record.ts";

/** mapExists: whether the job item has a steps map yet (its first entry writes the map). */
export type SuspendStep = { name: string; record: StepRecord; mapExists: boolean };

/**
 * A durable run's decision to end and wait (docs/architecture.md §22): what the suspend writes, and
 * what happens next. A class, so the run supervisor can tell it from any value a handler returns.
 */
export class Suspension {
  readonly waiting: WaitingRecord;
  /** The sleep's or event wait's record, written by the suspend itself (absent when recorded before). */
  readonly step: SuspendStep | undefined;
  /** An event wait's pointer, written before the suspend (lib/store/event-waiter-ops.ts). */
  readonly waiter: { event: string; match: string; step: string } | undefined;

  constructor(
    waiting: WaitingRecord,
    step?: SuspendStep,
    waiter?: { event: string; match: string; step: string },
  ) {
    this.waiting = waiting;
    this.step = step;
    this.waiter = waiter;
  }
}
