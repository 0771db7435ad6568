import { createHash } from "node:crypto";
import * as z from "zod";
import { InvalidStoreInput } from "../errors.ts";
import { indexSort } from "../job/key-layout.ts";
import { MAX_CURSOR_CHARS } from "../job/schemas.ts";
import type { JobStatus } from "../job/status.ts";
import type { JobItem } from "./job-item.ts";

/**
 * What GET /jobs searches by (docs/guide/finding-runs.md), and the one test of whether a job
 * matches it: every read path (the tag index, the status index, the scan) applies this same test to
 * the jobs it reads, so a path only decides what is read, never what matches.
 */
export interface SearchFilter {
  queue?: string;
  status?: JobStatus;
  tag?: string;
  kind?: string;
  /** A flow key under any of its kind's limits: the job's `flowKey` (the first's) or one of its `flowKeys`. */
  key?: string;
  /** Epoch ms: createdAfter ≤ createdAt < createdBefore. */
  createdAfter?: number;
  createdBefore?: number;
  /** Text in `lastError`, case-sensitive. */
  error?: string;
}

/** The attributes the test reads: all a scan needs to project. */
export const MATCHED_ATTRIBUTES = [
  "pk",
  "sk",
  "id",
  "createdAt",
  "queue",
  "status",
  "kind",
  "flowKey",
  "flowKeys",
  "lastError",
  "tags",
] as const;

export type Matched = Pick<JobItem, (typeof MATCHED_ATTRIBUTES)[number]>;

export function matches(job: Matched, f: SearchFilter): boolean {
  return (
    (f.queue === undefined || job.queue === f.queue) &&
    (f.status === undefined || job.status === f.status) &&
    (f.tag === undefined || (job.tags ?? []).includes(f.tag)) &&
    (f.kind === undefined || job.kind === f.kind) &&
    (f.key === undefined || job.flowKey === f.key || Object.values(job.flowKeys ?? {}).includes(f.key)) &&
    (f.createdAfter === undefined || job.createdAt >= f.createdAfter) &&
    (f.createdBefore === undefined || job.createdAt < f.createdBefore) &&
    (f.error === undefined || (job.lastError ?? "").includes(f.error))
  );
}

/** A job's place in newest-first order: its creation time, then its id (a ULID), as a sort key. */
export const placeOf = (job: { createdAt: number; id: string }) => indexSort(job.createdAt, job.id);

/** Newest first. */
export const newestFirst = (a: string, b: string) => (a < b ? 1 : a > b ? -1 : 0);

/**
 * A search's cursor: the place of the last job it answered, and a digest of the filter it answered,
 * so a cursor given with another filter is refused (a 400) rather than paging a different search.
 * base64url JSON, opaque to the caller, checked to the exact shape before use.
 */
const SearchCursor = z
  .object({
    q: z.string().length(22),
    // A job's place, or the start of a millisecond (`<15 digits>#`: where a tag search that ran
    // out of rounds had read down to).
    after: z.string().regex(/^\d{15}#[0-9A-Za-z]{0,64}$/),
  })
  .strict();

const digestOf = (f: SearchFilter) => {
  const fields = Object.entries(f)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : 1));
  return createHash("sha256").update(JSON.stringify(fields)).digest("base64url").slice(0, 22);
};

export const encodeSearchCursor = (f: SearchFilter, after: string) =>
  Buffer.from(JSON.stringify({ q: digestOf(f), after })).toString("base64url");

const notOurs = () => new InvalidStoreInput("cursor is not one this API returned for this query");

/** The place a cursor resumes after (exclusive), or InvalidStoreInput. */
export function decodeSearchCursor(cursor: string, f: SearchFilter): string {
  if (cursor.length > MAX_CURSOR_CHARS || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw notOurs();
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw notOurs();
  }
  const parsed = SearchCursor.safeParse(json);
  if (!parsed.success || parsed.data.q !== digestOf(f)) throw notOurs();
  return parsed.data.after;
}
