import type { GroupStatus } from "../job/group-status.ts";
import { indexSort } from "../job/key-layout.ts";
import type { IndexedStatus, JobStatus } from "../job/status.ts";
import { and, type Condition, or } from "./expression.ts";
import { indexPartition, indexPartitionPrefix } from "./keys.ts";
import { FORMAT_VERSION, STORED_FORMATS, type StoredFormat } from "./stored-formats.ts";
import { statusIndex } from "./table.ts";

/** Named condition fragments. Each store operation composes its ConditionExpression from these. */

export const attributeMissing =
  (attr: string): Condition =>
  (e) =>
    `attribute_not_exists(${e.name(attr)})`;

export const attributeExists =
  (attr: string): Condition =>
  (e) =>
    `attribute_exists(${e.name(attr)})`;

export const itemMissing: Condition = attributeMissing("pk");

export const itemExists: Condition = attributeExists("pk");

export const statusIs =
  (status: JobStatus): Condition =>
  (e) =>
    `${e.name("status")} = ${e.value(status)}`;

export const statusIn =
  (...statuses: JobStatus[]): Condition =>
  (e) =>
    `${e.name("status")} IN (${statuses.map((s) => e.value(s)).join(", ")})`;

/**
 * The job is scheduled, witnessed by its status-index key rather than its status: only a scheduled
 * job of `queue` has a `<queue>#scheduled#…` index partition (§3: every write that moves a job out
 * of the indexed statuses removes its index keys, and the partition names the status). For a role
 * IAM lets touch no `status` attribute (the token callback's, lib/deploy-plan/grants.ts). Any shard
 * count: a layout's shards only grow, and a job keeps the partition it was written with.
 */
export const scheduledIn =
  (queue: string): Condition =>
  (e) =>
    `begins_with(${e.name("gsi1pk")}, ${e.value(indexPartitionPrefix(queue, "scheduled"))})`;

/** The job's runAt has come. */
export const isDue =
  (now: number): Condition =>
  (e) =>
    `${e.name("runAt")} <= ${e.value(now)}`;

/** The previous owner stopped heartbeating: its lease may be taken over. */
export const leaseExpired =
  (now: number): Condition =>
  (e) =>
    `${e.name("leaseUntil")} < ${e.value(now)}`;

/**
 * The job item is in a format this code reads (none written: version 1). A claim or the DLQ drain
 * never takes a job a newer version wrote (a rollback meets them): it stays for that version
 * (docs/architecture.md §24). A missing item passes (it has no version).
 */
export const jobFormatKnown: Condition = or(
  attributeMissing(FORMAT_VERSION),
  (e) => `${e.name(FORMAT_VERSION)} <= ${e.value(STORED_FORMATS.job)}`,
);

/** The item is in a version of `format` this code reads: what a write that raises its version holds to. */
export const formatKnown = (format: StoredFormat): Condition =>
  or(
    attributeMissing(FORMAT_VERSION),
    (e) => `${e.name(FORMAT_VERSION)} <= ${e.value(STORED_FORMATS[format])}`,
  );

/**
 * The job may be taken now: its item is missing (the enqueue died between its message and its item
 * write), OR it is queued or scheduled and due, OR its owner stopped heartbeating (takeover); and
 * its item is in a format this code reads.
 */
export const claimable = (now: number): Condition =>
  and(
    or(
      itemMissing,
      and(statusIn("queued", "scheduled"), isDue(now)),
      and(statusIs("running"), leaseExpired(now)),
    ),
    jobFormatKnown,
  );

/**
 * A first claim of this attempt: the item is missing, or queued or scheduled and due (no takeover),
 * in a format this code reads.
 */
export const startable = (now: number): Condition =>
  and(or(itemMissing, and(statusIn("queued", "scheduled"), isDue(now))), jobFormatKnown);

/** A takeover of the run under `token`: still running under it, its lease lapsed, its format known. */
export const lapsedRunOf = (token: string, now: number): Condition =>
  and(statusIs("running"), leaseHeldBy(token), leaseExpired(now), jobFormatKnown);

/** The caller still owns the run: the fence every post-claim write carries. */
export const leaseHeldBy =
  (token: string): Condition =>
  (e) =>
    `${e.name("leaseToken")} = ${e.value(token)}`;

export const cancelNotRequested: Condition = attributeMissing("cancelRequested");

export const runAtIs =
  (runAt: number): Condition =>
  (e) =>
    `${e.name("runAt")} = ${e.value(runAt)}`;

export const attributeEquals =
  (attr: string, value: unknown): Condition =>
  (e) =>
    `${e.name(attr)} = ${e.value(value)}`;

export const attributeBefore =
  (attr: string, limit: number): Condition =>
  (e) =>
    `${e.name(attr)} < ${e.value(limit)}`;

export const attributeAtLeast =
  (attr: string, floor: number): Condition =>
  (e) =>
    `${e.name(attr)} >= ${e.value(floor)}`;

export const attributeAfter =
  (attr: string, bound: number): Condition =>
  (e) =>
    `${e.name(attr)} > ${e.value(bound)}`;

export const attributeAtMost =
  (attr: string, ceiling: number): Condition =>
  (e) =>
    `${e.name(attr)} <= ${e.value(ceiling)}`;

/** No reaper is promoting the job right now (or the one that was gave up before sending). */
export const promotionNotHeld = (now: number): Condition =>
  or(attributeMissing("promotingUntil"), attributeBefore("promotingUntil", now));

/** Index sort key condition: the entry's time is at or before `at` (keys are `<padded ms>#<id>`). */
/** A status-index key condition: one shard of a queue's items in an indexed status. */
export const inStatusShard = (queue: string, status: IndexedStatus, shard: number): Condition =>
  attributeEquals(statusIndex.hashKey, indexPartition(queue, status, shard));

export const isIndexBefore =
  (at: number): Condition =>
  (e) =>
    `${e.name("gsi1sk")} < ${e.value(indexSort(at + 1, ""))}`;

/** A leader lease is still held by this runner (renew or release). */
export const leaseOwnedBy =
  (owner: string): Condition =>
  (e) =>
    `${e.name("owner")} = ${e.value(owner)}`;

/** The schedule still waits for the fire the caller planned from: a second runner's advance loses. */
export const nextRunAtIs =
  (nextRunAt: number): Condition =>
  (e) =>
    `${e.name("nextRunAt")} = ${e.value(nextRunAt)}`;

/** Nobody edited the item since the caller read it (optimistic concurrency between editors). */
export const revisionIs =
  (revision: number): Condition =>
  (e) =>
    `${e.name("revision")} = ${e.value(revision)}`;

export const attributeNotEquals =
  (attr: string, value: unknown): Condition =>
  (e) =>
    `${e.name(attr)} <> ${e.value(value)}`;

/** A set attribute holds this member (false when the set is absent). */
export const setContains =
  (attr: string, member: number | string): Condition =>
  (e) =>
    `contains(${e.name(attr)}, ${e.value(member)})`;

export const not =
  (c: Condition): Condition =>
  (e) =>
    `NOT (${c(e)})`;

/** A group's status is one of these (docs/architecture.md §15). */
export const groupStatusIn =
  (...statuses: GroupStatus[]): Condition =>
  (e) =>
    `${e.name("status")} IN (${statuses.map((s) => e.value(s)).join(", ")})`;

/** A list attribute holds fewer than `n` elements (an absent one holds none). */
export const listShorterThan = (attr: string, n: number): Condition =>
  or(attributeMissing(attr), (e) => `size(${e.name(attr)}) < ${e.value(n)}`);

/** The job has never been claimed: queued, no attempt yet, no cancel asked. */
export const notStarted: Condition = and(
  statusIs("queued"),
  (e) => `${e.name("attempts")} = ${e.value(0)}`,
  cancelNotRequested,
);
