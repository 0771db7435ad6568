/**
 * Delivery lanes (docs/architecture.md §16): how much of the fenced lifecycle a kind pays for.
 * - fenced: every guarantee; 3 writes a job (enqueue, claim, finalize).
 * - lean: no enqueue-time item; the claim builds it from the message. 2 writes.
 * - at-least-once: no claim; one write records the outcome. A duplicate delivery may run twice.
 * - fire-and-forget: no write on success; failures and the dead are recorded.
 */
export const deliveryLanes = ["fenced", "lean", "at-least-once", "fire-and-forget"] as const;
export type DeliveryLane = (typeof deliveryLanes)[number];

/** The lanes whose runs take a claim (a lease and a fence); the others run straight from the message. */
export function isClaimed(lane: DeliveryLane): boolean {
  return lane === "fenced" || lane === "lean";
}

/** Whether the enqueue writes the job item (a scheduled job's item is always written: it has no message yet). */
export function writesAtEnqueue(lane: DeliveryLane): boolean {
  return lane === "fenced";
}

/**
 * What each lane keeps, for the README's table and for the checks that depend on it: a group's child
 * must be recorded when it ends, which fire-and-forget doesn't do on success.
 */
export const laneGuarantees: Record<
  DeliveryLane,
  {
    queuedVisible: boolean;
    cancelBeforeStart: boolean;
    uniqueKey: boolean;
    neverTwiceAtOnce: boolean;
    resultStored: boolean;
    batchHold: boolean;
    groupChild: boolean;
  }
> = {
  fenced: {
    queuedVisible: true,
    cancelBeforeStart: true,
    uniqueKey: true,
    neverTwiceAtOnce: true,
    resultStored: true,
    batchHold: true,
    groupChild: true,
  },
  lean: {
    queuedVisible: false,
    cancelBeforeStart: true,
    uniqueKey: true,
    neverTwiceAtOnce: true,
    resultStored: true,
    batchHold: false,
    groupChild: true,
  },
  "at-least-once": {
    queuedVisible: false,
    cancelBeforeStart: false,
    uniqueKey: true,
    neverTwiceAtOnce: false,
    resultStored: true,
    batchHold: false,
    groupChild: true,
  },
  "fire-and-forget": {
    queuedVisible: false,
    cancelBeforeStart: false,
    uniqueKey: true,
    neverTwiceAtOnce: false,
    resultStored: false,
    batchHold: false,
    groupChild: false,
  },
};
