import { QueryCommand, type QueryCommandOutput, ScanCommand } from "@aws-sdk/lib-dynamodb";
import { isIndexed } from "../job/status.ts";
import { attributeEquals, inStatusShard } from "./conditions.ts";
import type { StoreContext } from "./context.ts";
import { Expr } from "./expression.ts";
import { getJobs } from "./group-read-ops.ts";
import type { JobItem } from "./job-item.ts";
import type { ListPage } from "./read-ops.ts";
import {
  decodeSearchCursor,
  encodeSearchCursor,
  MATCHED_ATTRIBUTES,
  type Matched,
  matches,
  newestFirst,
  placeOf,
  type SearchFilter,
} from "./search-filter.ts";
import { checkFormat } from "./stored-formats.ts";
import { statusIndex } from "./table.ts";
import { searchByTag } from "./tag-search.ts";

/**
 * searchJobs — one page of the jobs matching `filter`, newest first (createdAt, then id), whatever
 * the filter. The read path follows the filter (docs/guide/finding-runs.md states each one's cost):
 * - `tag`: the tag index, read newest first (lib/store/tag-search.ts); cost grows with the tag's
 *   jobs newer than the page, not with the table;
 * - `queue` with `status` scheduled, dead or paused: that queue's shards of the status index, read
 *   whole (those jobs are rare: it is what the index is for);
 * - anything else: a scan of the table's job items (their matched attributes only), sorted. It
 *   reads the whole table on every page: an operator's path, which tags exist to avoid. On a table
 *   past MAX_SCANNED_ITEMS it stops there and answers `truncated`: newest first among the items it
 *   read, not surely the table's newest (the console says so), rather than outlast the API's 29 s.
 * The page's jobs are then read whole (BatchGetItem, eventually consistent).
 * A cursor is bound to its filter: one from another search is InvalidStoreInput (a 400).
 */
export async function searchJobs(
  ctx: StoreContext,
  filter: SearchFilter,
  page: { limit: number; cursor?: string; maxScanned?: number },
): Promise<ListPage> {
  const before = page.cursor !== undefined ? decodeSearchCursor(page.cursor, filter) : undefined;
  if (filter.tag !== undefined) {
    const found = await searchByTag(ctx, filter, filter.tag, page.limit, before);
    return {
      items: found.items,
      ...(found.after ? { cursor: encodeSearchCursor(filter, found.after) } : {}),
    };
  }
  const { candidates, truncated } =
    filter.queue !== undefined && filter.status !== undefined && isIndexed(filter.status)
      ? { candidates: await fromStatusIndex(ctx, filter.queue, filter.status), truncated: false }
      : await fromScan(ctx, page.maxScanned ?? MAX_SCANNED_ITEMS);
  const matching = candidates
    .filter((job) => matches(job, filter))
    .map((job) => ({ id: job.id, place: placeOf(job) }))
    .filter((job) => before === undefined || job.place < before)
    .sort((a, b) => newestFirst(a.place, b.place));
  const taken = matching.slice(0, page.limit);
  const items = await readWhole(
    ctx,
    taken.map((j) => j.id),
  );
  const last = taken.at(-1);
  return {
    items,
    ...(matching.length > page.limit && last ? { cursor: encodeSearchCursor(filter, last.place) } : {}),
    ...(truncated ? { truncated: true as const } : {}),
  };
}

/** The jobs of these ids, whole, in the ids' order (a job gone since it was listed is left out). */
async function readWhole(ctx: StoreContext, ids: readonly string[]): Promise<JobItem[]> {
  if (ids.length === 0) return [];
  const found = await getJobs(ctx, ids, { consistent: false });
  return ids.flatMap((id) => {
    const item = found.get(id);
    return item ? [checkFormat("job", item, `job ${id}`)] : [];
  });
}

const projection = (e: Expr) => MATCHED_ATTRIBUTES.map((a) => e.name(a)).join(", ");

/**
 * The most table items a scan search reads (a whole-table read past it would outlast the API's
 * 29 s and cost ~0.07 RCU an item on every page): past it the answer is `truncated`, and such a
 * table is searched exactly by tag, or by queue with an indexed status.
 */
export const MAX_SCANNED_ITEMS = 50_000;

/** The job items a scan read, and whether it stopped at `maxScanned` with more of the table unread. */
async function fromScan(
  ctx: StoreContext,
  maxScanned: number,
): Promise<{ candidates: Matched[]; truncated: boolean }> {
  const found: Matched[] = [];
  let startKey: Record<string, unknown> | undefined;
  let scanned = 0;
  do {
    if (scanned >= maxScanned) return { candidates: found, truncated: true };
    const e = new Expr();
    const out = await ctx.doc.send(
      new ScanCommand({
        TableName: ctx.table,
        FilterExpression: attributeEquals("sk", "job")(e),
        ProjectionExpression: projection(e),
        ...e.params(),
        ...(startKey ? { ExclusiveStartKey: startKey } : {}),
        ReturnConsumedCapacity: "TOTAL",
      }),
    );
    found.push(...((out.Items ?? []) as Matched[]));
    scanned += out.ScannedCount ?? 0;
    startKey = out.LastEvaluatedKey;
  } while (startKey);
  return { candidates: found, truncated: false };
}

async function fromStatusIndex(
  ctx: StoreContext,
  queue: string,
  status: "scheduled" | "dead" | "paused",
): Promise<Matched[]> {
  const shards = Array.from({ length: ctx.layout.indexShards }, (_, shard) => shard);
  const perShard = await Promise.all(
    shards.map(async (shard) => {
      const found: Matched[] = [];
      let startKey: Record<string, unknown> | undefined;
      do {
        const e = new Expr();
        const out: QueryCommandOutput = await ctx.doc.send(
          new QueryCommand({
            TableName: ctx.table,
            IndexName: statusIndex.name,
            KeyConditionExpression: inStatusShard(queue, status, shard)(e),
            ProjectionExpression: projection(e),
            ...e.params(),
            ...(startKey ? { ExclusiveStartKey: startKey } : {}),
            ReturnConsumedCapacity: "TOTAL",
          }),
        );
        found.push(...((out.Items ?? []) as Matched[]));
        startKey = out.LastEvaluatedKey;
      } while (startKey);
      return found;
    }),
  );
  // Unfinished groups share the index under their own partitions; only jobs have `sk = job`.
  return perShard.flat().filter((item) => item.sk === "job");
}
