import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import { indexSort } from "../job/key-layout.ts";
import type { StoreContext } from "./context.ts";
import { Expr } from "./expression.ts";
import { getJobs } from "./group-read-ops.ts";
import type { JobItem } from "./job-item.ts";
import { matches, newestFirst, placeOf, type SearchFilter } from "./search-filter.ts";
import { checkFormat } from "./stored-formats.ts";
import {
  entryJobId,
  jobsOfEntry,
  millisecondOf,
  type StoredTagEntry,
  TAG_ENTRY_ATTRIBUTES,
  TAG_SHARDS,
  tagPartition,
} from "./tag-entries.ts";

/** Bounds on one call's work: rounds of shard queries, and tag entries looked at. */
const MAX_ROUNDS = 8;
const MAX_EXAMINED = 1000;
/** Entries a shard query reads when other filters may turn most of them down. */
const WIDE_READ = 100;

/** One job's place in a tag's index (`<createdAt>#<id>`), with its kind. */
interface Entry {
  sk: string;
  kind: string;
}

/**
 * A page of a tag's jobs newest first: each shard of the tag is read newest first below `before`
 * (and within the time window, a range of the sort key), the shards merged, and the jobs every
 * shard has answered down to are looked at in order: the kind from the entry itself, everything else
 * from the job, read in chunks. Entries whose job is gone (expired, or never written) are skipped.
 * An entry names jobs created in one millisecond at or above its own sort key, so entries of the
 * same millisecond can interleave: a shard that has more is read to the start of its last entry's
 * millisecond (readShard), and has answered down to that.
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
    // A shard with more has answered only down to the start of its last entry's millisecond.
    const frontier = shards
      .filter((s) => s.more)
      .map((s) => s.downTo)
      .sort(newestFirst)[0];
    const ready = shards
      .flatMap((s) => s.entries)
      .filter((e) => (frontier === undefined || e.sk >= frontier) && (upper === undefined || e.sk < upper))
      .sort((a, b) => newestFirst(a.sk, b.sk))
      // A job named by two entries (its enqueue retried with its id, grouped otherwise) once.
      .filter((e, n, all) => n === 0 || all[n - 1]?.sk !== e.sk);
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
        // An entry left by a failed enqueue whose id was used again later names the job at a place
        // not its own: the job is answered at its own place only.
        if (!job || placeOf(job) !== entry.sk || !matches(job, filter)) continue;
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

/**
 * One shard's entries below `upper` (and from `lower`), newest first, `limit` of them, each job they
 * name at its own place. With more to read, the rest of its last entry's millisecond is read too (an
 * entry of that millisecond further down may name newer jobs): `downTo`, the start of that
 * millisecond, is where its jobs are all known.
 */
async function readShard(
  ctx: StoreContext,
  partition: string,
  limit: number,
  upper: string | undefined,
  lower: string | undefined,
): Promise<{ entries: Entry[]; more: boolean; downTo: string }> {
  const first = await queryShard(ctx, partition, limit, upper, lower);
  const last = first.items.at(-1)?.sk;
  if (!first.more || last === undefined)
    return { entries: first.items.flatMap(jobsOfEntry), more: false, downTo: "" };
  const downTo = millisecondOf(last);
  const rest: StoredTagEntry[] = [];
  for (let from: Record<string, unknown> | undefined, done = false; !done; ) {
    const page = await queryShard(ctx, partition, undefined, last, downTo, from);
    rest.push(...page.items);
    from = page.next;
    done = from === undefined;
  }
  return { entries: [...first.items, ...rest].flatMap(jobsOfEntry), more: true, downTo };
}

/** One Query of a shard's entries, newest first, below `upper` (exclusive) and from `lower`. */
async function queryShard(
  ctx: StoreContext,
  partition: string,
  limit: number | undefined,
  upper: string | undefined,
  lower: string | undefined,
  from?: Record<string, unknown>,
): Promise<{ items: StoredTagEntry[]; more: boolean; next?: Record<string, unknown> }> {
  // An empty window (a cursor at or below its start): DynamoDB refuses BETWEEN with its bounds reversed.
  if (upper !== undefined && lower !== undefined && upper <= lower) return { items: [], more: false };
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
      ProjectionExpression: TAG_ENTRY_ATTRIBUTES.map((a) => e.name(a)).join(", "),
      ...e.params(),
      ScanIndexForward: false,
      ...(limit !== undefined ? { Limit: limit } : {}),
      ...(from ? { ExclusiveStartKey: from } : {}),
      ReturnConsumedCapacity: "TOTAL",
    }),
  );
  // BETWEEN takes its upper bound in: the entry at it was read already.
  const items = ((out.Items ?? []) as StoredTagEntry[]).filter(
    (entry) => upper === undefined || entry.sk < upper,
  );
  return {
    items,
    more: out.LastEvaluatedKey !== undefined,
    ...(out.LastEvaluatedKey ? { next: out.LastEvaluatedKey } : {}),
  };
}
