import { DeleteCommand, ScanCommand } from "@aws-sdk/lib-dynamodb";
import { attributeEquals, statusIs } from "./conditions.ts";
import { conditionalDelete, type StoreContext, wonRace } from "./context.ts";
import { and, type Condition, Expr } from "./expression.ts";
import type { JobItem } from "./job-item.ts";
import { jobKey, payloadKey } from "./keys.ts";

/**
 * purgeJob — deletes a finished job past its retention, and its payload item if it had one.
 * input: the job as read. condition: same status and finishedAt as read, so a job redriven (or
 *   otherwise changed) since is left alone.
 * result: true when deleted.
 */
export async function purgeJob(ctx: StoreContext, item: JobItem): Promise<boolean> {
  const purged = await wonRace(
    conditionalDelete(
      ctx,
      "purgeJob",
      jobKey(item.id),
      and(statusIs(item.status), attributeEquals("finishedAt", item.finishedAt)),
      { readCurrent: false },
    ),
  );
  if (purged && item.payloadRef) await deleteItem(ctx, payloadKey(item.id));
  return purged;
}

/** deleteExpired — removes an item whose TTL passed (what DynamoDB's TTL does, for emulators). */
export function deleteExpired(
  ctx: StoreContext,
  key: { pk: string; sk: string },
  expiresAt: number,
): Promise<boolean> {
  return wonRace(
    conditionalDelete(ctx, "deleteExpired", key, attributeEquals("expiresAt", expiresAt), {
      readCurrent: false,
    }),
  );
}

async function deleteItem(ctx: StoreContext, key: { pk: string; sk: string }): Promise<void> {
  await ctx.doc.send(new DeleteCommand({ TableName: ctx.table, Key: key, ReturnConsumedCapacity: "TOTAL" }));
}

/** One page of a filtered scan: the sweep that stands in for TTL and un-indexed retention. */
export async function scanPage(
  ctx: StoreContext,
  filter: Condition,
  limit: number,
  startKey?: Record<string, unknown>,
): Promise<{ items: Record<string, unknown>[]; scanned: number; next?: Record<string, unknown> }> {
  const e = new Expr();
  const out = await ctx.doc.send(
    new ScanCommand({
      TableName: ctx.table,
      FilterExpression: filter(e),
      ...e.params(),
      Limit: limit,
      ...(startKey ? { ExclusiveStartKey: startKey } : {}),
      ReturnConsumedCapacity: "TOTAL",
    }),
  );
  return {
    items: out.Items ?? [],
    scanned: out.ScannedCount ?? 0,
    ...(out.LastEvaluatedKey ? { next: out.LastEvaluatedKey } : {}),
  };
}
