import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import { indexSort } from "../job/key-layout.ts";
import type { StoreContext } from "./context.ts";
import { Expr } from "./expression.ts";
import { getJobs } from "./group-read-ops.ts";
import type { JobItem } from "./job-item.ts";
import { matches, newestFirst, type SearchFilter } from "./search-filter.ts";
import { checkFormat } from "./stored-formats.ts";
import { entryJobId, TAG_SHARDS, tagPartition } from "./tag-entries.ts";

/** Bounds on one call's work: rounds of shard queries, and tag entries looked at. */
const MAX_ROUNDS = 8;
const MAX_EXAMINED = 1000;
/** Entries a shard query reads when other filters may turn most of them down. */
const WIDE_READ = 100;

interface Entry {
  sk: string;
  kind: string;
}

/**
 * A page of a tag's jobs newest first: each shard of the tag is read newest first below `before`
 * (and within the time window, a range of the sort key), the shards merged, and the entries every
 * shard has answered down to are looked at in order: the kind from the entry itself, everything else
 * from the job, read in chunks. Entries whose job is gone (expired, or never written) are skipped.
 * result: the page's jobs, and the place to go on after when more may follow (a call stops after
 * MAX_ROUNDS rounds or MAX_EXAMINED entries, and may then answer fewer than `limit` with a cursor).
 */
export async function searchByTag(
  ctx: StoreContext,
  filter: SearchFilter,
  tag: string,
  limit: number,
  before: string | undefined,
): Promise<{ items: JobItem[]; after?: string }> {
  const windowEnd = filter.createdBefore === undefined ? undefined : indexSort(filter.createdBefore, "");
  let upper = [before, windowEnd].filter((b) => b !== undefined).sort()[0];
  const lower = filter.createdAfter === undefined ? undefined : indexSort(filter.createdAfter, "");
  // Only the tag, the kind and the window: every entry of a living job matches, so read no more than needed.
  const narrow = [filter.queue, filter.status, filter.key, filter.error].every((f) => f === undefined);
  const items: JobItem[] = [];
  let examined = 0;
  for (let round = 0; round < MAX_ROUNDS && examined < MAX_EXAMINED; round++) {
    const want = narrow ? Math.min(WIDE_READ, limit - items.length + 1) : WIDE_READ;
    const shards = await Promise.all(
      Array.from({ length: TAG_SHARDS }, (_, s) => readShard(ctx, tagPartition(tag, s), want, upper, lower)),
    );
    // A shard with more has answered only down to its last entry: below that, its order is unknown.
    const frontier = shards
      .filter((s) => s.more)
      .map((s) => s.entries.at(-1)?.sk ?? "")
      .sort(newestFirst)[0];
    const ready = shards
      .flatMap((s) => s.entries)
      .filter((e) => frontier === undefined || e.sk >= frontier)
      .sort((a, b) => newestFirst(a.sk, b.sk));
    examined += ready.length;
    const candidates = ready.filter((e) => filter.kind === undefined || e.kind === filter.kind);
    for (let i = 0; i < candidates.length; ) {
      // The jobs are read a few more than the page still needs at a time: other filters may turn some down.
      const needed = limit - items.length;
      const chunk = candidates.slice(i, i + (narrow ? needed : Math.min(WIDE_READ, needed * 2)));
      i += chunk.length;
      const jobs = await getJobs(
        ctx,
        chunk.map((e) => entryJobId(e.sk)),
        { consistent: false },
      );
      for (const [n, entry] of chunk.entries()) {
        const job = jobs.get(entryJobId(entry.sk));
        if (!job || !matches(job, filter)) continue;
        items.push(checkFormat("job", job, `job ${job.id}`));
        if (items.length === limit) {
          const more = n < chunk.length - 1 || i < candidates.length || frontier !== undefined;
          return { items, ...(more ? { after: entry.sk } : {}) };
        }
      }
    }
    if (frontier === undefined) return { items };
    upper = frontier;
  }
  return { items, ...(upper !== undefined ? { after: upper } : {}) };
}

async function readShard(
  ctx: StoreContext,
  partition: string,
  limit: number,
  upper: string | undefined,
  lower: string | undefined,
): Promise<{ entries: Entry[]; more: boolean }> {
  // An empty window (a cursor at or below its start): DynamoDB refuses BETWEEN with its bounds reversed.
  if (upper !== undefined && lower !== undefined && upper <= lower) return { entries: [], more: false };
  const e = new Expr();
  const pk = `${e.name("pk")} = ${e.value(partition)}`;
  const sk = e.name("sk");
  const range =
    upper !== undefined && lower !== undefined
      ? ` AND ${sk} BETWEEN ${e.value(lower)} AND ${e.value(upper)}`
      : upper !== undefined
        ? ` AND ${sk} < ${e.value(upper)}`
        : lower !== undefined
          ? ` AND ${sk} >= ${e.value(lower)}`
          : "";
  const out = await ctx.doc.send(
    new QueryCommand({
      TableName: ctx.table,
      KeyConditionExpression: pk + range,
      ProjectionExpression: `${sk}, ${e.name("kind")}`,
      ...e.params(),
      ScanIndexForward: false,
      Limit: limit,
      ReturnConsumedCapacity: "TOTAL",
    }),
  );
  // BETWEEN takes its upper bound in: the place resumed after is not read again.
  const entries = ((out.Items ?? []) as Entry[]).filter((entry) => upper === undefined || entry.sk < upper);
  return { entries, more: out.LastEvaluatedKey !== undefined };
}
