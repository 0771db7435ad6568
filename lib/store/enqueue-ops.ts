import { PutCommand } from "@aws-sdk/lib-dynamodb";
import type { StoreTransitions } from "../job/status.ts";
import { attributeEquals, itemMissing, runAtIs, statusIs } from "./conditions.ts";
import {
  type ConflictOptions,
  conditionalDelete,
  conditionalPut,
  conditionalUpdate,
  orOnConflict,
  type StoreContext,
  wonRace,
} from "./context.ts";
import { and, Update } from "./expression.ts";
import type { JobItem } from "./job-item.ts";
import { jobKey, payloadKey, uniqueKeyLock } from "./keys.ts";
import { formatStamp } from "./stored-formats.ts";

const TOTAL = "TOTAL" as const;

/**
 * putJob — the enqueue's item write.
 * input: a fully built job item (queued or scheduled).
 * condition: no item with this id exists yet.
 * result: { created: true } or, when the worker already built the job from its message (the message
 *   is sent first, so in a busy queue this race is common), { created: false, current? } — the job
 *   exists either way; `current` only when asked for.
 */
export async function putJob(
  ctx: StoreContext,
  item: JobItem,
  options: ConflictOptions = {},
): Promise<PutJobResult> {
  const write = conditionalPut(
    ctx,
    "putJob",
    { ...item, ...formatStamp("job") } as JobItem & Record<string, unknown>,
    itemMissing,
    options,
  );
  return orOnConflict(
    write.then((): PutJobResult => ({ created: true })),
    (current: JobItem | undefined): PutJobResult => ({ created: false, ...(current ? { current } : {}) }),
  );
}

export type PutJobResult = { created: true } | { created: false; current?: JobItem };

export const putJobTransitions = [
  ["missing", "queued"],
  ["missing", "scheduled"],
] as const satisfies StoreTransitions;

/**
 * putPayload — a large payload's own immutable item, written before the message so that any later
 * reader (worker building the job, API, reaper) can find it.
 * condition: none; rewriting the same bytes is idempotent.
 */
export async function putPayload(
  ctx: StoreContext,
  id: string,
  payloadJson: string,
  expiresAt: number,
): Promise<void> {
  await ctx.doc.send(
    new PutCommand({
      TableName: ctx.table,
      Item: { ...payloadKey(id), payload: payloadJson, expiresAt, ...formatStamp("payload") },
      ReturnConsumedCapacity: TOTAL,
    }),
  );
}

export interface UniqueLock {
  jobId: string;
  createdAt: number;
  /** The holder's message is not due before this: until then a missing job item is expected. */
  pendingUntil?: number;
  /**
   * The holder's lane writes no item at enqueue (docs/architecture.md §16): until `pendingUntil` (its
   * message's retention) a missing item means a job still queued, so the key is a duplicate.
   */
  unwritten?: boolean;
}

/**
 * acquireUniqueLock — reserves (queue, uniqueKey) for a job id, before its message is sent.
 * condition: no lock exists.
 * result: { acquired: true } or { acquired: false, holder } naming the job that holds it.
 */
export async function acquireUniqueLock(
  ctx: StoreContext,
  queue: string,
  uniqueKey: string,
  jobId: string,
  expiresAt: number,
  pendingUntil = ctx.clock.now(),
  unwritten = false,
): Promise<AcquireResult> {
  const key = uniqueKeyLock(queue, uniqueKey);
  const write = conditionalPut(
    ctx,
    "acquireUniqueLock",
    {
      ...key,
      jobId,
      createdAt: ctx.clock.now(),
      pendingUntil,
      expiresAt,
      ...(unwritten ? { unwritten } : {}),
      ...formatStamp("uniqueLock"),
    },
    itemMissing,
  );
  return orOnConflict(
    write.then((): AcquireResult => ({ acquired: true })),
    (holder: UniqueLock | undefined) =>
      holder
        ? { acquired: false as const, holder }
        : // The lock vanished (TTL) between the failed put and the read: try again.
          acquireUniqueLock(ctx, queue, uniqueKey, jobId, expiresAt, pendingUntil, unwritten),
  );
}

export type AcquireResult = { acquired: true } | { acquired: false; holder: UniqueLock };

/**
 * takeOverUniqueLock — moves a lock whose job is terminal (or never got written) to a new job.
 * condition: the lock still names the old holder, so two takers can't both win.
 * result: true when taken over; false when someone else moved it first.
 */
export async function takeOverUniqueLock(
  ctx: StoreContext,
  queue: string,
  uniqueKey: string,
  previousJobId: string,
  jobId: string,
  expiresAt: number,
  pendingUntil = ctx.clock.now(),
  unwritten = false,
): Promise<boolean> {
  return wonRace(
    conditionalUpdate(
      ctx,
      "takeOverUniqueLock",
      uniqueKeyLock(queue, uniqueKey),
      (e) => ({
        update: new Update(e)
          .set("jobId", jobId)
          .set("createdAt", ctx.clock.now())
          .set("pendingUntil", pendingUntil)
          .set("expiresAt", expiresAt)
          .set("unwritten", unwritten),
        condition: attributeEquals("jobId", previousJobId),
      }),
      { readCurrent: false },
    ),
  );
}

export const markQueuedTransitions = [["scheduled", "queued"]] as const satisfies StoreTransitions;

/**
 * markQueued — a scheduled job whose message has just been sent leaves the index.
 * condition: still scheduled for the same runAt (a claim or cancel may have moved it already).
 * result: true when moved; false when something else got there first, which is fine.
 */
export async function markQueued(ctx: StoreContext, id: string, runAt: number): Promise<boolean> {
  return wonRace(
    conditionalUpdate(
      ctx,
      "markQueued",
      jobKey(id),
      (e) => ({
        // Its message has just gone out: the stale-message sweep counts from now, not from createdAt.
        update: new Update(e)
          .set("status", "queued")
          .set("resentAt", ctx.clock.now())
          .remove("gsi1pk", "gsi1sk", "promotingUntil"),
        condition: and(statusIs("scheduled"), runAtIs(runAt)),
      }),
      { readCurrent: false },
    ),
  );
}

/**
 * releaseUniqueLock — gives a key back when the enqueue that took it failed before sending.
 * condition: the lock still names this job. result: none; a lost race means someone else owns it.
 */
export async function releaseUniqueLock(
  ctx: StoreContext,
  queue: string,
  uniqueKey: string,
  jobId: string,
): Promise<void> {
  await wonRace(
    conditionalDelete(
      ctx,
      "releaseUniqueLock",
      uniqueKeyLock(queue, uniqueKey),
      attributeEquals("jobId", jobId),
      {
        readCurrent: false,
      },
    ),
  );
}
