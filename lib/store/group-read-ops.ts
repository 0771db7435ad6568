import { BatchGetCommand, type BatchGetCommandOutput, GetCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { TransientError } from "../errors.ts";
import { indexSort } from "../job/key-layout.ts";
import type { StoreContext } from "./context.ts";
import { Expr } from "./expression.ts";
import type { GroupItem, SliceItem } from "./group-item.ts";
import type { JobItem } from "./job-item.ts";
import { groupIndexPartition, groupKey, jobKey, sliceKey } from "./keys.ts";
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

/** What reading a group's slices needs of the group. */
export type SliceLayout = Pick<GroupItem, "id" | "slices" | "slicePartitions">;

/**
 * listSlices — slices `from` onwards, in order, at most `limit`: one Query of the group's own
 * partition for a group from before slices spread, else one BatchGetItem of the slice keys up to
 * the group's allocated count (a slice not written yet is absent, as it is from the Query).
 * result: the slices read and the number of the next one, when there may be more.
 */
export async function listSlices(
  ctx: StoreContext,
  group: SliceLayout,
  from: number,
  limit: number,
): Promise<{ slices: SliceItem[]; next?: number }> {
  if (group.slicePartitions === undefined) return queryOwnPartition(ctx, group.id, from, limit);
  const end = Math.min(from + limit, group.slices);
  const numbers = Array.from({ length: Math.max(0, end - from) }, (_, i) => from + i);
  const keys = numbers.map((n) => sliceKey(group.id, n, group.slicePartitions));
  const slices = (await batchGetAll(ctx, keys, true)) as unknown as SliceItem[];
  slices.sort((a, b) => a.slice - b.slice);
  return { slices, ...(end < group.slices ? { next: end } : {}) };
}

async function queryOwnPartition(ctx: StoreContext, groupId: string, from: number, limit: number) {
  const e = new Expr();
  const first = sliceKey(groupId, from, undefined);
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
  group: SliceLayout,
  pageSize = 100,
): AsyncGenerator<SliceItem> {
  let from: number | undefined = 0;
  while (from !== undefined) {
    const page: { slices: SliceItem[]; next?: number } = await listSlices(ctx, group, from, pageSize);
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
  // Each id once: BatchGetItem refuses a request that names a key twice.
  const items = (await batchGetAll(ctx, [...new Set(ids)].map(jobKey), consistent)) as unknown as JobItem[];
  return new Map(items.map((item) => [item.id, item]));
}

/** The items of these keys that exist, 100 keys a BatchGetItem, unprocessed keys retried. */
async function batchGetAll(
  ctx: StoreContext,
  allKeys: readonly Record<string, unknown>[],
  consistent: boolean,
): Promise<Record<string, unknown>[]> {
  const found: Record<string, unknown>[] = [];
  for (let i = 0; i < allKeys.length; i += 100) {
    let keys: Record<string, unknown>[] | undefined = allKeys.slice(i, i + 100);
    for (let round = 0; keys && keys.length > 0 && round < 8; round++) {
      const out: BatchGetCommandOutput = await ctx.doc.send(
        new BatchGetCommand({
          RequestItems: { [ctx.table]: { Keys: keys, ConsistentRead: consistent } },
          ReturnConsumedCapacity: "TOTAL",
        }),
      );
      found.push(...(out.Responses?.[ctx.table] ?? []));
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
