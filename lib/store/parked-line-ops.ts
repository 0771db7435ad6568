import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import type { FlowKey } from "../job/flow-key.ts";
import { parkPrefix } from "../job/key-layout.ts";
import type { StoreContext } from "./context.ts";
import type { JobItem } from "./job-item.ts";
import { parkPartition, parkShard } from "./keys.ts";
import { statusIndex } from "./table.ts";

/**
 * A flow key's line (docs/architecture.md §20): its parked jobs in the status index, under
 * `~park#<shard>`, in arrival order aged by priority (parkIndexKeys). Reads only; parkJob
 * (lib/store/flow-key-ops.ts) puts a job in it, and the claim takes it out.
 */

/** The key's parked jobs, first in line first (at most `limit`). */
export async function parkedJobs(ctx: StoreContext, fk: FlowKey, limit: number): Promise<JobItem[]> {
  const out = await ctx.doc.send(new QueryCommand({ ...lineOf(ctx, fk), Limit: limit }));
  return (out.Items ?? []) as JobItem[];
}

/** How many jobs wait in the key's line (counted page by page, up to `max`). */
export async function countParked(ctx: StoreContext, fk: FlowKey, max = 100_000): Promise<number> {
  let count = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const out = await ctx.doc.send(
      new QueryCommand({
        ...lineOf(ctx, fk),
        Select: "COUNT",
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    count += out.Count ?? 0;
    start = out.LastEvaluatedKey;
  } while (start && count < max);
  return count;
}

/**
 * The first parked job of a parked-index shard whose line comes after `after` (a sort-key prefix:
 * pass a key's prefix + U+FFFF to skip past its whole line): the reaper visits each waiting key once.
 */
export async function nextParkedJob(
  ctx: StoreContext,
  shard: number,
  after = "",
): Promise<JobItem | undefined> {
  const out = await ctx.doc.send(
    new QueryCommand({
      TableName: ctx.table,
      IndexName: statusIndex.name,
      KeyConditionExpression: "#p = :p AND #s > :after",
      ExpressionAttributeNames: { "#p": statusIndex.hashKey, "#s": statusIndex.rangeKey },
      ExpressionAttributeValues: { ":p": parkPartition(shard), ":after": after },
      Limit: 1,
      ReturnConsumedCapacity: "TOTAL",
    }),
  );
  return out.Items?.[0] as JobItem | undefined;
}

/** The Query that reads one key's line in its parked-index shard, first in line first. */
function lineOf(ctx: StoreContext, fk: FlowKey) {
  return {
    TableName: ctx.table,
    IndexName: statusIndex.name,
    KeyConditionExpression: "#p = :p AND begins_with(#s, :prefix)",
    ExpressionAttributeNames: { "#p": statusIndex.hashKey, "#s": statusIndex.rangeKey },
    ExpressionAttributeValues: {
      ":p": parkPartition(parkShard(fk)),
      ":prefix": parkPrefix(fk),
    },
    ReturnConsumedCapacity: "TOTAL" as const,
  };
}
