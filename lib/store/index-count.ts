import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import type { IndexedStatus } from "../job/status.ts";
import { inStatusShard } from "./conditions.ts";
import type { StoreContext } from "./context.ts";
import { Expr } from "./expression.ts";
import { statusIndex } from "./table.ts";

/** A count query's pages per shard: past this the count is a floor (`atLeast`), never a long walk. */
const PAGES_PER_SHARD = 4;

/**
 * countIndexed — how many of a queue's jobs are in an indexed status (paused: GET /queues counts it).
 * A read, no condition: one COUNT query per shard of the status index (a page reads up to 1 MB of
 * keys, so a rare status costs a read unit or so a shard). result: the count, and whether it was cut
 * short (then it is a floor).
 */
export async function countIndexed(
  ctx: StoreContext,
  queue: string,
  status: IndexedStatus,
): Promise<{ count: number; atLeast: boolean }> {
  const shards = Array.from({ length: ctx.layout.indexShards }, (_, shard) => shard);
  const counts = await Promise.all(
    shards.map(async (shard) => {
      let count = 0;
      let startKey: Record<string, unknown> | undefined;
      for (let page = 0; page < PAGES_PER_SHARD; page++) {
        const e = new Expr();
        const out = await ctx.doc.send(
          new QueryCommand({
            TableName: ctx.table,
            IndexName: statusIndex.name,
            KeyConditionExpression: inStatusShard(queue, status, shard)(e),
            ...e.params(),
            Select: "COUNT",
            ...(startKey ? { ExclusiveStartKey: startKey } : {}),
            ReturnConsumedCapacity: "TOTAL",
          }),
        );
        count += out.Count ?? 0;
        startKey = out.LastEvaluatedKey;
        if (!startKey) return { count, cut: false };
      }
      return { count, cut: true };
    }),
  );
  return {
    count: counts.reduce((sum, c) => sum + c.count, 0),
    atLeast: counts.some((c) => c.cut),
  };
}
