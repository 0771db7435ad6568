import { PutCommand } from "@aws-sdk/lib-dynamodb";
import { indexSort } from "../job/key-layout.ts";
import type { StoreContext } from "./context.ts";
import { shardOf } from "./keys.ts";
import { formatStamp } from "./stored-formats.ts";

/**
 * The tag index (docs/architecture.md §3, "The tag index"): one small immutable item per tag of a
 * tagged job, written once at enqueue and never rewritten, so a job's claims, heartbeats and
 * finalize cost the index nothing, and a job without tags costs it nothing at all.
 *
 * - pk `tag#<shard>#<tag>`: the shard (FNV-1a of the job's id mod TAG_SHARDS) first, so no tag can
 *   read as another's shard; the shards keep one busy tag from one partition's write limit.
 * - sk `<createdAt, 15 digits>#<id>`: newest first is a descending Query, a time window a range.
 * - `kind` (immutable) so a kind filter needs no read of the job; `expiresAt` the job's longest
 *   retention from when it was due, as its payload item's.
 */
export const TAG_SHARDS = 4;

export const tagPartition = (tag: string, shard: number) => `tag#${shard}#${tag}`;

export interface TagEntry {
  pk: string;
  sk: string;
  kind: string;
  expiresAt: number;
}

/** The entries of a job's tags (none for a job without tags). */
export function tagEntries(
  job: { id: string; kind: string; createdAt: number; tags?: readonly string[] },
  expiresAt: number,
): TagEntry[] {
  const shard = shardOf(job.id, TAG_SHARDS);
  return (job.tags ?? []).map((tag) => ({
    pk: tagPartition(tag, shard),
    sk: indexSort(job.createdAt, job.id),
    kind: job.kind,
    expiresAt,
  }));
}

/** The job id a tag entry's sort key names. */
export const entryJobId = (sk: string) => sk.slice(sk.indexOf("#") + 1);

/**
 * putTagEntries — writes a job's tag entries, before its message goes out (lib/producer/write-order.ts):
 * a job is findable by its tags from its first moment; an entry whose job never came (a crash, a
 * refused enqueue) is skipped by the search, which reads the job, and expires.
 * input: the entries. condition: none (an entry is immutable: writing it again writes the same item).
 */
export async function putTagEntries(ctx: StoreContext, entries: readonly TagEntry[]): Promise<void> {
  await Promise.all(
    entries.map((entry) =>
      ctx.doc.send(
        new PutCommand({
          TableName: ctx.table,
          Item: { ...entry, ...formatStamp("tagEntry") },
          ReturnConsumedCapacity: "TOTAL",
        }),
      ),
    ),
  );
}
