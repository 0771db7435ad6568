/** The EMF vocabulary, free of imports so that infra (dashboard, alarms) can read it cheaply. */
export const METRICS_NAMESPACE = "skyforge";
/**
 * The `service` dimension Powertools adds to every EMF blob. One value for every function and the
 * pool, so a dashboard or alarm names a metric exactly: {service, queue} or {service, queue, kind}.
 */
export const METRICS_SERVICE = "skyforge";

/** Every EMF metric the engine emits; the dashboard builder reads this list. */
export const countMetrics = [
  "enqueued",
  "started",
  "succeeded",
  "retried",
  "dead",
  // Jobs whose attempts ran out waiting for an operator (onExhausted "pause", docs/architecture.md §21).
  "paused",
  "throttled",
  "cancelled",
  "revived",
  "duplicateDeliveries",
  "leaseLost",
  // Durable jobs (docs/architecture.md §22): runs ended to wait, and waits ended by a token or an event.
  "suspended",
  "resumed",
  // The scheduled functions' actions (reaper, cleanup, cron), per queue and kind like the rest.
  "promoted",
  "deadLettered",
  "purged",
  "cronFired",
  "cronMissed",
  "cronFailed",
  "staleResent",
  // The pool (lib/pool/): jobs handed to a child per kind, and children lost to each failure mode.
  "released",
  "poolDispatched",
  "childRespawns",
  "childDesyncs",
  "childTimeouts",
  // Job groups (lib/groups/): children recorded in their group; groups finished, by completion kind.
  "groupChildRecorded",
  "groupFinished",
  // Batch kinds (docs/architecture.md §18): handler calls, and calls put off because their key was busy.
  "batchCalls",
  "batchKeyBusy",
  // Debounce and singleton (docs/architecture.md §19): enqueues answered by a job of their key, and
  // deliveries put off because an earlier job of their singleton key hasn't ended.
  "debounced",
  "singletonWaits",
  // Flow control per key (§20): deliveries put off by their key's cool-down or rate, and jobs parked
  // in their key's line because its places were all held.
  "keyWaits",
  "keyParked",
  // Realtime (docs/architecture.md §25): messages dropped after their retries.
  "realtimeDropped",
] as const;
/** groupCompletionLag: from the group's last child recorded to its completion job's start. */
export const timingMetrics = [
  "queueLatency",
  "runDuration",
  "dispatchLatency",
  "groupCompletionLag",
  // Batch kinds: from the oldest item's runAt to its call's start.
  "batchWait",
] as const;
/** Distributions of sizes (unit Count): items per batch call, per kind. */
export const sizeMetrics = ["batchItems"] as const;
/** Last value wins within a flush: the pool's children by state, per kind. */
export const gaugeMetrics = ["childrenBusy", "childrenIdle"] as const;
export type CountMetric = (typeof countMetrics)[number];
export type TimingMetric = (typeof timingMetrics)[number];
export type GaugeMetric = (typeof gaugeMetrics)[number];
export type SizeMetric = (typeof sizeMetrics)[number];
