import { ScanCommand } from "@aws-sdk/lib-dynamodb";
import type { StoreTransitions } from "../job/status.ts";
import { attributeBefore, attributeEquals, attributeMissing, leaseExpired, statusIs } from "./conditions.ts";
import { conditionalUpdate, type StoreContext, wonRace } from "./context.ts";
import { and, Expr, or, Update } from "./expression.ts";
import type { JobItem } from "./job-item.ts";
import { jobKey } from "./keys.ts";

/** A job as the stale-message sweep reads it; `resentAt` counts from its last fresh message. */
export type SweptJob = JobItem;

export interface StaleJobsQuery {
  /** This run's slice of the table: DynamoDB's parallel-scan segment, `segment` of `totalSegments`. */
  segment: number;
  totalSegments: number;
  /**
   * Epoch ms. A job created before this, and not re-sent by the sweep since, may carry a message
   * SQS is about to drop (or has dropped): every message of a job is sent at or after its createdAt.
   */
  sentBefore: number;
  /**
   * Epoch ms. A running job whose lease ended before this lost its owner so long ago that its message
   * would have come back by now (its visibility is at most 12 h): the message is gone.
   */
  leaseEndedBefore: number;
  limit: number;
  startKey?: Record<string, unknown>;
}

/**
 * scanStaleJobs — one page of one segment of the table, filtered to the jobs that may have outlived
 * their message: queued (or running under a lease that ended long ago), created before `sentBefore`,
 * and not re-sent by the sweep since then. A read, no condition. Queued jobs are not indexed (that
 * would cost an index write on every job's happy path), so this is a scan: it reads, and pays for,
 * the whole slice, matches or not (docs/architecture.md §7).
 */
export async function scanStaleJobs(
  ctx: StoreContext,
  q: StaleJobsQuery,
): Promise<{ items: SweptJob[]; scanned: number; next?: Record<string, unknown> }> {
  const e = new Expr();
  const filter = and(
    attributeEquals("sk", "job"),
    attributeBefore("createdAt", q.sentBefore),
    or(attributeMissing("resentAt"), attributeBefore("resentAt", q.sentBefore)),
    or(statusIs("queued"), and(statusIs("running"), leaseExpired(q.leaseEndedBefore))),
  );
  const out = await ctx.doc.send(
    new ScanCommand({
      TableName: ctx.table,
      FilterExpression: filter(e),
      ...e.params(),
      ...(q.totalSegments > 1 ? { Segment: q.segment, TotalSegments: q.totalSegments } : {}),
      Limit: q.limit,
      ...(q.startKey ? { ExclusiveStartKey: q.startKey } : {}),
      ReturnConsumedCapacity: "TOTAL",
    }),
  );
  return {
    items: (out.Items ?? []) as SweptJob[],
    scanned: out.ScannedCount ?? 0,
    ...(out.LastEvaluatedKey ? { next: out.LastEvaluatedKey } : {}),
  };
}

/**
 * markResent — records that the sweep sent the job a fresh message, so that the next passes leave it
 * alone until that message, too, grows old.
 * input: the job as read by scanStaleJobs, and the time of the send.
 * condition: the job is as read: same status and attempts (no claim, finalize or takeover since),
 *   and not re-sent since by another reaper (resentAt as read).
 * result: true when recorded; false when the job moved on first. The message sent is then a
 *   duplicate, which the claim absorbs like any other (docs/architecture.md §6).
 */
export function markResent(ctx: StoreContext, seen: SweptJob, at: number): Promise<boolean> {
  return wonRace(
    conditionalUpdate(
      ctx,
      "markResent",
      jobKey(seen.id),
      (e) => ({
        update: new Update(e).set("resentAt", at),
        condition: and(
          statusIs(seen.status),
          attributeEquals("attempts", seen.attempts),
          seen.resentAt === undefined
            ? attributeMissing("resentAt")
            : attributeEquals("resentAt", seen.resentAt),
        ),
      }),
      { readCurrent: false },
    ),
  );
}

/** The job keeps its status (queued, or running until a claim takes it over). */
export const markResentTransitions = [] as const satisfies StoreTransitions;
