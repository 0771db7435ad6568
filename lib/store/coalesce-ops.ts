import { GetCommand } from "@aws-sdk/lib-dynamodb";
import type { StoreTransitions } from "../job/status.ts";
import {
  attributeAfter,
  attributeAtMost,
  attributeEquals,
  attributeMissing,
  itemExists,
  itemMissing,
  listShorterThan,
  notStarted,
} from "./conditions.ts";
import { conditionalPut, conditionalUpdate, orOnConflict, type StoreContext, wonRace } from "./context.ts";
import { and, type Condition, or, Update } from "./expression.ts";
import type { JobItem } from "./job-item.ts";
import { coalesceLockKey, jobKey } from "./keys.ts";
import { formatStamp } from "./stored-formats.ts";

/**
 * Debounce and singleton in the store (docs/architecture.md §19). A kind's key has one lock naming
 * the job an enqueue of the key joins (a debounce burst's, a queue-one's waiting job) or that a new
 * job must wait behind (a singleton's). The lock moves only from the job it names, so two enqueues
 * can't both start a burst; a job's payload changes only while it has never started, so a run
 * never sees half a burst.
 */

export interface CoalesceLock {
  jobId: string;
  /** When the lock came to name this job: its burst's first enqueue. */
  firstAt: number;
  /** A leading burst's latest enqueue. */
  lastAt: number;
}

/** Every operation below leaves a job's status as it is. */
export const coalesceTransitions = [] as const satisfies StoreTransitions;

/** The lock of a kind's key, read strongly (undefined: no job of the key yet, or its lock expired). */
export async function readCoalesceLock(
  ctx: StoreContext,
  kind: string,
  key: string,
): Promise<CoalesceLock | undefined> {
  const out = await ctx.doc.send(
    new GetCommand({
      TableName: ctx.table,
      Key: coalesceLockKey(kind, key),
      ConsistentRead: true,
      ReturnConsumedCapacity: "TOTAL",
    }),
  );
  return out.Item as CoalesceLock | undefined;
}

/**
 * takeCoalesceLock — the lock comes to name a new job.
 * input: the kind, the key, the new job's lock, the job the caller saw named (none: no lock seen),
 *   and when the lock may expire (epoch s: once no job of the key can still be waiting).
 * condition: the lock is missing, or still names `previous`: of two enqueues that saw the same
 *   lock, one moves it.
 * result: true when taken; false when another enqueue moved it first (read it again).
 */
export function takeCoalesceLock(
  ctx: StoreContext,
  kind: string,
  key: string,
  lock: CoalesceLock,
  previous: string | undefined,
  expiresAt: number,
): Promise<boolean> {
  const condition: Condition = previous === undefined ? itemMissing : attributeEquals("jobId", previous);
  return wonRace(
    conditionalPut(
      ctx,
      "takeCoalesceLock",
      { ...coalesceLockKey(kind, key), ...lock, expiresAt, ...formatStamp("coalesceLock") },
      condition,
      {
        readCurrent: false,
      },
    ),
  );
}

/**
 * extendLeadingBurst — an enqueue joins a leading burst, whose first job already ran or runs.
 * input: the lock's job, now, the period and maximum delay (ms; the delay absent: none).
 * condition: the lock names that job, its latest enqueue is less than a period ago, and its first
 *   less than the maximum delay ago.
 * result: true when joined (the lock's lastAt is now); false when the burst is over.
 */
export function extendLeadingBurst(
  ctx: StoreContext,
  kind: string,
  key: string,
  jobId: string,
  now: number,
  periodMs: number,
  maxDelayMs: number | undefined,
): Promise<boolean> {
  const open = and(
    attributeEquals("jobId", jobId),
    attributeAfter("lastAt", now - periodMs),
    maxDelayMs === undefined ? itemExists : attributeAfter("firstAt", now - maxDelayMs),
  );
  return wonRace(
    conditionalUpdate(
      ctx,
      "extendLeadingBurst",
      coalesceLockKey(kind, key),
      (e) => ({ update: new Update(e).set("lastAt", now), condition: open }),
      { readCurrent: false },
    ),
  );
}

/**
 * reviseWaitingJob — a later enqueue takes over a job that hasn't started: a trailing burst's (its
 * payload, and its run a period later) or a queue-one key's waiting job (its payload).
 * input: the job, the new payload, now, and (trailing) where the burst's run moves.
 * condition: the job never started (queued, no attempt, no cancel) and, for a burst, is not yet due:
 *   a due job's burst is closed even if no worker has claimed it yet.
 * result: the job as revised; undefined when it started, was cancelled or its burst closed.
 */
export function reviseWaitingJob(
  ctx: StoreContext,
  id: string,
  payloadJson: string,
  now: number,
  move?: BurstMove,
): Promise<JobItem | undefined> {
  return orNothing(
    conditionalUpdate<JobItem>(
      ctx,
      "reviseWaitingJob",
      jobKey(id),
      (e) => {
        const update = new Update(e).set("payload", payloadJson).increment("enqueues", 1);
        if (move) moveBurst(update, move);
        const condition = move === undefined ? notStarted : and(notStarted, notYetDue(now));
        return { update, condition };
      },
      { readCurrent: false },
    ),
  );
}

/**
 * appendToBurst — a later enqueue adds its payload to a collect burst.
 * input: the burst's job, the payload, now, where the burst's run moves, and the burst's bounds.
 * condition: the job never started and isn't due, and the burst has room (items and bytes).
 * result: the job with the payload as its burst's last; undefined when the burst is closed or full.
 */
export function appendToBurst(
  ctx: StoreContext,
  id: string,
  payloadJson: string,
  now: number,
  move: BurstMove,
  bounds: { maxItems: number; maxBytes: number },
): Promise<JobItem | undefined> {
  const bytes = Buffer.byteLength(payloadJson);
  return orNothing(
    conditionalUpdate<JobItem>(
      ctx,
      "appendToBurst",
      jobKey(id),
      (e) => ({
        update: moveBurst(
          new Update(e)
            .append("burst", [payloadJson])
            .increment("burstBytes", bytes)
            .increment("enqueues", 1),
          move,
        ),
        condition: and(
          notStarted,
          notYetDue(now),
          listShorterThan("burst", bounds.maxItems),
          or(attributeMissing("burstBytes"), attributeAtMost("burstBytes", bounds.maxBytes - bytes)),
        ),
      }),
      { readCurrent: false },
    ),
  );
}

/**
 * Where a trailing or collect burst's run moves with a later enqueue: its new runAt, and the start
 * deadline of that enqueue counted from it (none: the job has none any more). The latest enqueue's
 * deadline is the one in force, as its payload is.
 */
export interface BurstMove {
  runAt: number;
  startBy?: number;
}

function moveBurst(update: Update, move: BurstMove): Update {
  update.set("runAt", move.runAt);
  return move.startBy === undefined ? update.remove("startBy") : update.set("startBy", move.startBy);
}

/** A write whose lost condition means "not this job": undefined. */
const orNothing = (write: Promise<JobItem>): Promise<JobItem | undefined> =>
  orOnConflict(write, () => undefined);

/** The job's runAt is still ahead: its burst is open. */
const notYetDue = (now: number): Condition => attributeAfter("runAt", now);
