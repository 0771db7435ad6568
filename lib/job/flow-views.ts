/**
 * What the API answers about flow keys (docs/architecture.md §20), declared once: lib/flow/ builds
 * them, the client (client/skyforge-client.ts) and the console (console/api-shapes.d.ts) read them.
 */

/** GET /keys?queue=…&limit=…: how many keys it answers when `limit` is absent, and at most. */
export const BUSIEST_KEYS_DEFAULT = 10;
export const BUSIEST_KEYS_MAX = 50;

/** A flow limit's rate as the API shows it (its cost function left out). */
export interface FlowRateView {
  limit: number;
  periodSeconds: number;
  burst?: number;
  /** An adaptive rate's: true. */
  adaptive?: true;
  /** While an adaptive rate runs below its limit after a partner's back-pressure: what and why. */
  inForce?: {
    /** Units per period in force. */
    limit: number;
    /** When it last changed (a halving, or a climb). */
    since: string;
    /** The throttle that lowered it: the handler's message and the job. */
    reason: string;
  };
}

/** A flow key as GET /keys/{kind}/{key} shows it (docs/guide/flow-control.md). */
export interface FlowKeyView {
  kind: string;
  key: string;
  /** The limit the key is of, when the kind declares several (its name). */
  limit?: string;
  /** The kind's limits' names, in order, when it declares several. */
  limits?: string[];
  /** Places held: runs going, or handed a place and on their way. */
  running: number;
  /** Jobs parked in the key's line. */
  waiting: number;
  /** The key's concurrency, when its kind declares one. */
  concurrency?: number;
  /** The key's rate, when its limit declares one (units per period; a job's cost is its units). */
  rate?: FlowRateView;
  /** While the key cools down after a ThrottledError, when it ends. */
  coolUntil?: string;
}

/** One flow key of GET /keys?queue=…: as GET /keys/{kind}/{key} shows it, without rate and cool-down. */
export type BusyKey = Pick<FlowKeyView, "kind" | "key" | "limit" | "running" | "waiting" | "concurrency"> & {
  /**
   * When the first job of its line became due: how long the key has waited (the oldest parked job's
   * time, or with priorities at most 4 x PRIORITY_STEP_MS later than it).
   */
  oldestWaitingSince?: string;
};

/**
 * GET /keys?queue=…: the queue's keys with the most parked jobs, most first. `truncated`: the queue
 * had more waiting keys than one listing looks at (200), so these are the busiest of those looked
 * at, not surely of them all.
 */
export interface BusiestKeys {
  items: BusyKey[];
  truncated?: true;
}
