import { StoredFormatTooNew } from "../errors.ts";
import type { Update } from "./expression.ts";

/**
 * Every format skyforge stores, and the version of each that this code writes and reads
 * (docs/architecture.md §24). A table item carries its version in `fv`, written with the item's
 * creation (a PutItem's own attribute, or `if_not_exists` in the UpdateItem that may create it), so
 * no write costs more; the SQS message carries it in `v`; a claims object in its `fv` user metadata.
 * An item without `fv` was written before formats had versions: it is version 1.
 *
 * The upgrade rule: a change to a format bumps its version here, and the code keeps reading every
 * older version (test/fixtures/stored-formats/v<N>/ holds items and messages of each, captured by
 * scripts/capture-stored-formats.ts, and test/integration/stored-formats.test.ts reads them). A write
 * that puts a part of a newer format into an older item (a step record of a newer shape in a job)
 * raises the item's `fv` in the same write. A reader meeting a version newer than it knows (a
 * rollback) refuses it with StoredFormatTooNew instead of misreading it.
 */
export const STORED_FORMATS = {
  /**
   * The job item `job#<id>`/`job`, with what rides in it: its step records, wait, history, membership, place in a flow key's line.
   * v2 (#40): step records keep their call (`op`) and place, races (`race`, `w`), children (`child`)
   * and a taken event's id (`e`); `waiting` for a race or a child; the journal's `version`; a child's `parent`.
   * v3 (#42): a job of a kind with several flow limits: its other keys (`flowKeys`), its rate costs
   * (`flowCosts`), the limit whose line it is parked in (`parkedIn`).
   * v4 (#43): its `tags`.
   * v5 (#42): `priority` 1..5 beside "normal" and "critical" (an older reader would refuse a number).
   */
  job: 5,
  /** A payload's own item `job#<id>`/`payload` (over 400 bytes, up to 8 KiB). */
  payload: 1,
  /**
   * The SQS job message's body (lib/transport/job-message.ts), versioned by its `v`. v2 (#40): a
   * child's `parent`. v3 (#42): `flowKeys`, `flowCosts`, `rateSlots`, `placeSince` (several flow limits).
   * v4 (#43): `tags`. v5 (#42): `priority` 1..5 beside "normal" and "critical".
   */
  message: 5,
  /** An object in the claims bucket: a payload, result, step result, event or token data over 8 KiB. */
  claimObject: 1,
  uniqueLock: 1,
  queueState: 1,
  schedule: 1,
  leaderLease: 1,
  rateBucket: 1,
  group: 1,
  groupSlice: 1,
  /** A wait token `tok#<id>`. v2 (#40): status `cancelled` (it lost its job's race). */
  token: 2,
  /** An event waiter `evt#<event>#<match>`/<job id>. v2 (#40): a race's `branch`. */
  eventWaiter: 2,
  /** An event POST /events keeps for its lookback, `evb#<event>#<match>` (#40). */
  bufferedEvent: 1,
  /**
   * A flow key's state item `fkey#<kind>#<key>` (its places and cool-down). Its optional
   * `adaptedRate` (#42) is not a new version: a reader that ignores it runs the key at its declared
   * rate, which is what a rollback should do.
   */
  flowKey: 1,
  batchBacklog: 1,
  batchCallPermit: 1,
  coalesceLock: 1,
  flowHealCursor: 1,
  /**
   * A tag index entry `tag#<shard>#<tag>` (lib/store/tag-entries.ts). v2 (#43): the jobs of one
   * enqueue call that share the tag and millisecond (`ids`, `kinds`), up to 16; a v1 entry names one
   * job by its sort key, with its `kind`.
   */
  tagEntry: 2,
} as const;

export type StoredFormat = keyof typeof STORED_FORMATS;

/** The attribute a table item keeps its format's version in. */
export const FORMAT_VERSION = "fv";

/** The version attribute of a new item, for a PutItem that creates it whole. */
export const formatStamp = (format: StoredFormat): { fv: number } => ({ fv: STORED_FORMATS[format] });

/** The version attribute for an UpdateItem that may create the item: set once, when absent. */
export const stampFormat = (update: Update, format: StoredFormat): Update =>
  update.setIfAbsent(FORMAT_VERSION, STORED_FORMATS[format]);

/**
 * Raises an existing item's version to this code's, in the update that puts a part of the newer
 * format into it (a step record of a new shape in a job an older version started). The write must
 * be held to items this code reads (a fence, or formatKnown), so a newer item is never lowered.
 */
export const raiseFormat = (update: Update, format: StoredFormat): Update =>
  update.set(FORMAT_VERSION, STORED_FORMATS[format]);

/** The version a stored item (or any record with the attribute) is in; none written: 1. */
export function formatVersionOf(stored: object): number {
  const version = (stored as Record<string, unknown>)[FORMAT_VERSION];
  return typeof version === "number" ? version : 1;
}

/** Whether this code knows the stored item's format version. */
export const readsFormat = (format: StoredFormat, stored: object): boolean =>
  formatVersionOf(stored) <= STORED_FORMATS[format];

/**
 * Refuses an item this code can't read: StoredFormatTooNew naming it (`what`), its version and the
 * newest this code reads. Returns the item, so a reader can check where it takes the item.
 */
export function checkFormat<T extends object>(format: StoredFormat, stored: T, what: string): T {
  if (!readsFormat(format, stored))
    throw new StoredFormatTooNew(format, formatVersionOf(stored), STORED_FORMATS[format], what);
  return stored;
}
