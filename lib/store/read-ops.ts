import { GetCommand, QueryCommand, ScanCommand } from "@aws-sdk/lib-dynamodb";
import type { IndexedStatus, JobStatus } from "../job/status.ts";
import { isIndexed } from "../job/status.ts";
import { attributeEquals, inStatusShard, statusIs } from "./conditions.ts";
import type { StoreContext } from "./context.ts";
import {
  decodeIndexCursor,
  decodeScanCursor,
  encodeCursor,
  type IndexCursor,
  type ScanCursor,
} from "./cursor.ts";
import { and, type Condition, Expr } from "./expression.ts";
import type { JobItem } from "./job-item.ts";
import { jobKey } from "./keys.ts";
import { checkFormat } from "./stored-formats.ts";
import { statusIndex } from "./table.ts";

/** getJob — strongly consistent read of the job item. result: the item or undefined. */
export async function getJob(ctx: StoreContext, id: string): Promise<JobItem | undefined> {
  const out = await ctx.doc.send(
    new GetCommand({
      TableName: ctx.table,
      Key: jobKey(id),
      ConsistentRead: true,
      ReturnConsumedCapacity: "TOTAL",
    }),
  );
  const item = out.Item as JobItem | undefined;
  return item && checkFormat("job", item, `job ${id}`);
}

export interface ListFilter {
  queue?: string;
  status?: JobStatus;
  limit: number;
  cursor?: string;
}

export interface ListPage {
  items: JobItem[];
  cursor?: string;
  /** A search that read only part of a large table (lib/store/search-ops.ts): newest of what it read. */
  truncated?: true;
}

/**
 * listJobs — one page of jobs.
 * Scheduled and dead jobs of a queue come from the sharded status index, shard by shard, each in
 * time order. Every other filter is an operator path: a bounded scan that reads at most a few pages
 * of the table per call and may return fewer than `limit` items with a cursor to go on.
 * Every call's work is bounded (at most INDEX_QUERIES_PER_CALL queries or SCAN_PAGES_PER_CALL scan
 * pages), whatever the cursor; a cursor the store didn't hand out is InvalidStoreInput
 * (lib/store/cursor.ts).
 */
export async function listJobs(ctx: StoreContext, filter: ListFilter): Promise<ListPage> {
  if (filter.queue && filter.status && isIndexed(filter.status)) {
    return listFromIndex(ctx, filter.queue, filter.status, filter);
  }
  return listFromScan(ctx, filter);
}

async function listFromIndex(
  ctx: StoreContext,
  queue: string,
  status: IndexedStatus,
  filter: ListFilter,
): Promise<ListPage> {
  const shards = ctx.layout.indexShards;
  let cursor: IndexCursor = filter.cursor
    ? decodeIndexCursor(filter.cursor, queue, status, shards)
    : { shard: 0 };
  const items: JobItem[] = [];
  for (
    let queries = 0;
    queries < shards + EXTRA_INDEX_QUERIES && cursor.shard < shards && items.length < filter.limit;
    queries++
  ) {
    const e = new Expr();
    const out = await ctx.doc.send(
      new QueryCommand({
        TableName: ctx.table,
        IndexName: statusIndex.name,
        KeyConditionExpression: inStatusShard(queue, status, cursor.shard)(e),
        ...e.params(),
        Limit: filter.limit - items.length,
        ...(cursor.key ? { ExclusiveStartKey: cursor.key } : {}),
        ReturnConsumedCapacity: "TOTAL",
      }),
    );
    items.push(...((out.Items ?? []) as JobItem[]));
    cursor = out.LastEvaluatedKey
      ? { shard: cursor.shard, key: out.LastEvaluatedKey as IndexCursor["key"] }
      : { shard: cursor.shard + 1 };
  }
  return { items, ...(cursor.shard < shards ? { cursor: encodeCursor(cursor) } : {}) };
}

/**
 * Enough to walk every shard once and fill a page (a Query stops at its Limit, and items are small);
 * the bound holds even if DynamoDB answered with many short pages.
 */
const EXTRA_INDEX_QUERIES = 4;
const SCAN_PAGES_PER_CALL = 4;

async function listFromScan(ctx: StoreContext, filter: ListFilter): Promise<ListPage> {
  let startKey: ScanCursor["key"] | undefined = filter.cursor
    ? decodeScanCursor(filter.cursor).key
    : undefined;
  const items: JobItem[] = [];
  for (let page = 0; page < SCAN_PAGES_PER_CALL && items.length < filter.limit; page++) {
    const e = new Expr();
    const parts: Condition[] = [attributeEquals("sk", "job")];
    if (filter.queue) parts.push(attributeEquals("queue", filter.queue));
    if (filter.status) parts.push(statusIs(filter.status));
    const out = await ctx.doc.send(
      new ScanCommand({
        TableName: ctx.table,
        FilterExpression: and(...parts)(e),
        ...e.params(),
        Limit: 200,
        ...(startKey ? { ExclusiveStartKey: startKey } : {}),
        ReturnConsumedCapacity: "TOTAL",
      }),
    );
    for (const item of (out.Items ?? []) as JobItem[]) {
      if (items.length === filter.limit) {
        // Resume right after the last item returned, not after the whole scanned page.
        const last = items[items.length - 1] as JobItem;
        return { items, cursor: encodeCursor({ key: { pk: last.pk, sk: last.sk } }) };
      }
      items.push(item);
    }
    startKey = out.LastEvaluatedKey as ScanCursor["key"] | undefined;
    if (!startKey) return { items };
  }
  return { items, ...(startKey ? { cursor: encodeCursor({ key: startKey }) } : {}) };
}
