import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import type { StoreTransitions } from "../job/status.ts";
import {
  claimable,
  inStatusShard,
  isIndexBefore,
  promotionNotHeld,
  runAtIs,
  statusIs,
} from "./conditions.ts";
import { conditionalUpdate, orOnConflict, type StoreContext } from "./context.ts";
import { and, Expr, Update } from "./expression.ts";
import type { JobItem, JobSeed } from "./job-item.ts";
import { indexKeys, jobKey } from "./keys.ts";
import { seedIfMissing } from "./lease-ops.ts";
import { statusIndex } from "./table.ts";

export interface IndexPage {
  items: JobItem[];
  next?: Record<string, unknown>;
}

/**
 * One page of a queue's index shard (scheduled or dead), oldest first, up to `before` (epoch ms,
 * inclusive). A read, no condition. The reaper and cleanup walk shards with it.
 */
export async function queryIndexBefore(
  ctx: StoreContext,
  partition: { queue: string; status: "scheduled" | "dead"; shard: number },
  before: number,
  limit: number,
  startKey?: Record<string, unknown>,
): Promise<IndexPage> {
  const e = new Expr();
  const out = await ctx.doc.send(
    new QueryCommand({
      TableName: ctx.table,
      IndexName: statusIndex.name,
      KeyConditionExpression: and(
        inStatusShard(partition.queue, partition.status, partition.shard),
        isIndexBefore(before),
      )(e),
      ...e.params(),
      Limit: limit,
      ...(startKey ? { ExclusiveStartKey: startKey } : {}),
      ReturnConsumedCapacity: "TOTAL",
    }),
  );
  return {
    items: (out.Items ?? []) as JobItem[],
    ...(out.LastEvaluatedKey ? { next: out.LastEvaluatedKey } : {}),
  };
}

/**
 * beginPromotion — the reaper takes a due scheduled job to send its message.
 * input: id and the runAt it read; holdUntil, after which another reaper may try again (it covers a
 *   reaper that dies between this write and its send).
 * condition: still scheduled for that runAt, and no other promotion holds it.
 * result: the item (the caller sends, then markQueued), or undefined when another reaper, a claim,
 *   a cancel or a reschedule got there first.
 */
export async function beginPromotion(
  ctx: StoreContext,
  id: string,
  runAt: number,
  holdUntil: number,
): Promise<JobItem | undefined> {
  const hold = conditionalUpdate<JobItem>(
    ctx,
    "beginPromotion",
    jobKey(id),
    (e) => ({
      update: new Update(e).set("promotingUntil", holdUntil),
      condition: and(statusIs("scheduled"), runAtIs(runAt), promotionNotHeld(ctx.clock.now())),
    }),
    { readCurrent: false },
  );
  return orOnConflict(hold, () => undefined);
}

/** The job stays scheduled, held; markQueued (markQueuedTransitions) moves it on. */
export const beginPromotionTransitions = [] as const satisfies StoreTransitions;

export type DeadLetterResult =
  | { marked: true; item: JobItem }
  | { marked: false; current: JobItem | undefined };

/**
 * deadLetter — a job whose message SQS moved to the DLQ (too many receives) becomes dead.
 * input: the seed from the DLQ message (the item may never have been written), the reason, the TTL.
 * condition: no item yet, OR queued/scheduled and due, OR running under an expired lease. A live
 *   lease means a worker is on it right now: that run decides the job's fate. A job waiting for a
 *   later runAt (a retry's backoff) still has its real message on the way: this one is a stale copy.
 * result: dead, indexed for operators, lease removed; or the current item when the condition lost.
 */
export async function deadLetter(
  ctx: StoreContext,
  seed: JobSeed,
  reason: string,
  expiresAt: number,
): Promise<DeadLetterResult> {
  const now = ctx.clock.now();
  const write = conditionalUpdate<JobItem>(ctx, "deadLetter", jobKey(seed.id), (e) => {
    const update = seedIfMissing(
      new Update(e)
        .set("status", "dead")
        .set("lastError", reason)
        .set("finishedAt", now)
        .set("expiresAt", expiresAt)
        .setAll(indexKeys(seed.queue, "dead", seed.id, now, ctx.layout.indexShards))
        .setIfAbsent("attempts", 0)
        .remove("leaseToken", "leaseUntil", "promotingUntil"),
      seed,
    );
    // Exactly the jobs a claim could take now: nobody else is entitled to decide their fate.
    return { update, condition: claimable(now) };
  });
  return orOnConflict(
    write.then((item): DeadLetterResult => ({ marked: true, item })),
    (current: JobItem | undefined): DeadLetterResult => ({ marked: false, current }),
  );
}

export const deadLetterTransitions = [
  ["missing", "dead"],
  ["queued", "dead"],
  ["scheduled", "dead"],
  ["running", "dead"],
] as const satisfies StoreTransitions;
