import { BatchGetCommand, type BatchGetCommandOutput, GetCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { TransientError } from "../errors.ts";
import type { StoreContext } from "./context.ts";
import { Expr } from "./expression.ts";
import type { GroupItem, SliceItem } from "./group-item.ts";
import type { JobItem } from "./job-item.ts";
import { groupIndexPartition, groupKey, indexSort, jobKey, sliceKey } from "./keys.ts";
import { statusIndex } from "./table.ts";

/** getGroup — strongly consistent read of the group item. result: the item or undefined. */
export async function getGroup(ctx: StoreContext, id: string): Promise<GroupItem | undefined> {
  const out = await ctx.doc.send(
    new GetCommand({
      TableName: ctx.table,
      Key: groupKey(id),
      ConsistentRead: true,
      ReturnConsumedCapacity: "TOTAL",
    }),
  );
  return out.Item as GroupItem | undefined;
}

/**
 * listSlices — slices `from` onwards, in order, at most `limit` (one Query of the group's partition).
 * result: the slices read and the number of the next one, when there may be more.
 */
export async function listSlices(
  ctx: StoreContext,
  groupId: string,
  from: number,
  limit: number,
): Promise<{ slices: SliceItem[]; next?: number }> {
  const e = new Expr();
  const first = sliceKey(groupId, from);
  const out = await ctx.doc.send(
    new QueryCommand({
      TableName: ctx.table,
      KeyConditionExpression: `${e.name("pk")} = ${e.value(first.pk)} AND ${e.name("sk")} BETWEEN ${e.value(first.sk)} AND ${e.value("slice#9999999")}`,
      ...e.params(),
      Limit: limit,
      ConsistentRead: true,
      ReturnConsumedCapacity: "TOTAL",
    }),
  );
  const slices = (out.Items ?? []) as SliceItem[];
  const last = slices.at(-1);
  return { slices, ...(out.LastEvaluatedKey && last ? { next: last.slice + 1 } : {}) };
}

/** Every slice of a group, page by page. */
export async function* allSlices(
  ctx: StoreContext,
  groupId: string,
  pageSize = 100,
): AsyncGenerator<SliceItem> {
  let from: number | undefined = 0;
  while (from !== undefined) {
    const page: { slices: SliceItem[]; next?: number } = await listSlices(ctx, groupId, from, pageSize);
    yield* page.slices;
    from = page.next;
  }
}

/**
 * getJobs — the job items of these ids (BatchGetItem, 100 a call, unprocessed keys retried).
 * result: id → item, for those that exist.
 */
export async function getJobs(
  ctx: StoreContext,
  ids: readonly string[],
  { consistent = true }: { consistent?: boolean } = {},
): Promise<Map<string, JobItem>> {
  const found = new Map<string, JobItem>();
  for (let i = 0; i < ids.length; i += 100) {
    let keys: Record<string, unknown>[] | undefined = ids.slice(i, i + 100).map(jobKey);
    for (let round = 0; keys && keys.length > 0 && round < 8; round++) {
      const out: BatchGetCommandOutput = await ctx.doc.send(
        new BatchGetCommand({
          RequestItems: { [ctx.table]: { Keys: keys, ConsistentRead: consistent } },
          ReturnConsumedCapacity: "TOTAL",
        }),
      );
      for (const item of (out.Responses?.[ctx.table] ?? []) as JobItem[]) found.set(item.id, item);
      keys = out.UnprocessedKeys?.[ctx.table]?.Keys;
    }
    if (keys && keys.length > 0) throw new TransientError("DynamoDB left keys unprocessed after 8 rounds");
  }
  return found;
}

/** queryDueGroups — unfinished groups of one index shard whose next look is at or before `now`. */
export async function queryDueGroups(
  ctx: StoreContext,
  shard: number,
  now: number,
  limit: number,
): Promise<GroupItem[]> {
  const e = new Expr();
  const out = await ctx.doc.send(
    new QueryCommand({
      TableName: ctx.table,
      IndexName: statusIndex.name,
      KeyConditionExpression: `${e.name("gsi1pk")} = ${e.value(groupIndexPartition(shard))} AND ${e.name("gsi1sk")} < ${e.value(indexSort(now + 1, ""))}`,
      ...e.params(),
      Limit: limit,
      ReturnConsumedCapacity: "TOTAL",
    }),
  );
  return (out.Items ?? []) as GroupItem[];
}
