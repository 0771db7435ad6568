import { PutCommand } from "@aws-sdk/lib-dynamodb";
import pLimit from "p-limit";
import { indexSort } from "../job/key-layout.ts";
import type { StoreContext } from "./context.ts";
import { shardOf } from "./keys.ts";
import { checkFormat, formatStamp } from "./stored-formats.ts";

/**
 * The tag index (docs/architecture.md §3, "The tag index"): small immutable items written once at
 * enqueue and never rewritten, so a job's claims, heartbeats and finalize cost the index nothing,
 * and a job without tags costs it nothing at all. An entry names the jobs of one enqueue call that
 * carry one tag and were created in the same millisecond (a call's jobs are), up to
 * JOBS_PER_ENTRY: a single enqueue's tag is one entry (1 write unit), a batch's tag shared by many
 * of its jobs one entry for each JOBS_PER_ENTRY of them.
 *
 * - pk `tag#<shard>#<tag>`: the shard (FNV-1a of the entry's first job id mod TAG_SHARDS) first, so
 *   no tag can read as another's shard; the shards keep one busy tag from one partition's limit.
 * - sk `<createdAt, 15 digits>#<first id>`: its jobs' ids in order, the first the smallest, so each
 *   job's own place (`<createdAt>#<id>`, the sk of an entry of one job) is at or above the entry's:
 *   newest first is a descending Query, a time window a range (its jobs share its createdAt).
 * - `ids` and `kinds` (format v2): the jobs and their kinds (immutable), so a kind filter needs no
 *   read of the job. A v1 entry names one job, by its sk, and its `kind`.
 * - `expiresAt` the longest retention of its jobs from when they were due, as their payload items'.
 */
export const TAG_SHARDS = 4;

/** Jobs one entry names at most: with ids of 26 bytes and kinds of a few words, about 1 KB. */
export const JOBS_PER_ENTRY = 16;

/** Entry writes of one enqueue in flight at once (as its other writes: lib/producer/write-order.ts). */
const PUTS_AT_ONCE = 16;

export const tagPartition = (tag: string, shard: number) => `tag#${shard}#${tag}`;

/** A tagged job, as the tag index sees it. */
export interface TaggedJob {
  id: string;
  kind: string;
  createdAt: number;
  tags: readonly string[];
  /** Epoch seconds: its payload's retention. */
  expiresAt: number;
}

export interface TagEntry {
  pk: string;
  sk: string;
  ids: string[];
  kinds: string[];
  expiresAt: number;
}

/** A job's part of the tag index (none for a job without tags). */
export function taggedJob(
  job: { id: string; kind: string; createdAt: number; tags?: readonly string[] },
  expiresAt: number,
): TaggedJob | undefined {
  const tags = job.tags ?? [];
  return tags.length === 0
    ? undefined
    : { id: job.id, kind: job.kind, createdAt: job.createdAt, tags, expiresAt };
}

/** The entries of some jobs' tags (one enqueue call's): one per tag and millisecond, JOBS_PER_ENTRY at most. */
export function tagEntries(jobs: readonly TaggedJob[]): TagEntry[] {
  const together = new Map<string, { tag: string; createdAt: number; jobs: TaggedJob[] }>();
  for (const job of jobs)
    for (const tag of job.tags) {
      const at = `${job.createdAt}#${tag}`;
      const group = together.get(at) ?? { tag, createdAt: job.createdAt, jobs: [] };
      group.jobs.push(job);
      together.set(at, group);
    }
  return [...together.values()].flatMap(({ tag, createdAt, jobs: group }) => {
    const sorted = [...group].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const entries: TagEntry[] = [];
    for (let at = 0; at < sorted.length; at += JOBS_PER_ENTRY) {
      const part = sorted.slice(at, at + JOBS_PER_ENTRY);
      const first = part[0] as TaggedJob;
      entries.push({
        pk: tagPartition(tag, shardOf(first.id, TAG_SHARDS)),
        sk: indexSort(createdAt, first.id),
        ids: part.map((j) => j.id),
        kinds: part.map((j) => j.kind),
        expiresAt: Math.max(...part.map((j) => j.expiresAt)),
      });
    }
    return entries;
  });
}

/** A tag entry as read: its sk, and its jobs' (v2) or its one job's kind (v1). */
export type StoredTagEntry = { sk: string; kind?: string; ids?: string[]; kinds?: string[] };

/** Attributes a search reads of an entry. */
export const TAG_ENTRY_ATTRIBUTES = ["sk", "kind", "ids", "kinds", "fv"] as const;

/** Each job an entry names, at its own place (`<createdAt>#<id>`), with its kind. */
export function jobsOfEntry(entry: StoredTagEntry): { sk: string; kind: string }[] {
  checkFormat("tagEntry", entry as Record<string, unknown>, `tag entry ${entry.sk}`);
  if (entry.ids === undefined) return [{ sk: entry.sk, kind: entry.kind ?? "" }];
  const millisecond = millisecondOf(entry.sk);
  return entry.ids.map((id, n) => ({ sk: `${millisecond}${id}`, kind: entry.kinds?.[n] ?? "" }));
}

/** The start of the millisecond of a place in the index (`<createdAt>#`), which its entry's jobs share. */
export const millisecondOf = (sk: string) => sk.slice(0, sk.indexOf("#") + 1);

/** The job id a job's place in the index (its sk as a v1 entry's) names. */
export const entryJobId = (sk: string) => sk.slice(sk.indexOf("#") + 1);

/**
 * putTagEntries — writes tag entries, before their jobs' messages go out
 * (lib/producer/write-order.ts): a job is findable by its tags from its first moment; an entry
 * whose job never came (a crash, a refused enqueue) is skipped by the search, which reads the
 * job, and expires.
 * input: the entries. condition: none (an entry is immutable: writing it again writes the same item).
 * result: for each entry, in order, undefined when written or the error that refused it.
 */
export function putTagEntries(ctx: StoreContext, entries: readonly TagEntry[]): Promise<unknown[]> {
  const limit = pLimit(PUTS_AT_ONCE);
  return Promise.all(
    entries.map((entry) =>
      limit(() =>
        ctx.doc
          .send(
            new PutCommand({
              TableName: ctx.table,
              Item: { ...entry, ...formatStamp("tagEntry") },
              ReturnConsumedCapacity: "TOTAL",
            }),
          )
          .then(
            () => undefined,
            (error: unknown) => error ?? new Error("tag entry write failed"),
          ),
      ),
    ),
  );
}
