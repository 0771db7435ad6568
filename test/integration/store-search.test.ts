import { BatchWriteCommand, ScanCommand } from "@aws-sdk/lib-dynamodb";
import { ulid } from "ulid";
import { describe, expect, it } from "vitest";
import { InvalidStoreInput } from "../../lib/errors.ts";
import type { JobStatus } from "../../lib/job/status.ts";
import type { StoreContext } from "../../lib/store/context.ts";
import type { JobItem } from "../../lib/store/job-item.ts";
import { indexKeys } from "../../lib/store/keys.ts";
import type { SearchFilter } from "../../lib/store/search-filter.ts";
import { searchJobs } from "../../lib/store/search-ops.ts";
import { formatStamp } from "../../lib/store/stored-formats.ts";
import { JOBS_PER_ENTRY, type TaggedJob, tagEntries, taggedJob } from "../../lib/store/tag-entries.ts";
import { jobItem, onEveryBackend, QUEUE, SHARDS, storeErrorOf } from "../support/store-conformance.ts";

/**
 * Search (#43's acceptance): 10 000 jobs over 50 tags and 5 kinds, written through the store's own
 * item and tag-entry shapes in batches; every filter combination docs/guide/finding-runs.md lists
 * answers newest first and exactly the jobs a full scan of the table finds for it, page after page.
 * Both DynamoDB emulators (a STORE_FILES file: test/support/store-conformance.ts).
 */

const JOBS = 10_000;
const TAGS = Array.from({ length: 50 }, (_, i) => `tag-${i}`);
const KINDS = ["echo", "resize", "email", "report", "sync"];
const STATUSES: JobStatus[] = ["queued", "running", "done", "dead", "scheduled", "cancelled"];
const ERRORS = ["timeout after 30 s", "HTTP 503 from upstream", "invalid payload: missing field"];
const T0 = Date.parse("2026-03-01T00:00:00Z");
const MINUTE = 60_000;

/** A small deterministic generator (the same table on every run and backend). */
function random(seed: number) {
  let s = seed;
  return (n: number) => {
    s = (Math.imul(s, 1_103_515_245) + 12_345) & 0x7fffffff;
    return s % n;
  };
}

/** Jobs of one enqueue call: created in one millisecond, and most of its tagged jobs share a tag. */
const CALL = 40;

/**
 * The 10 000 jobs, in calls of CALL (every other call in the same millisecond as the one before, so
 * their tag entries interleave): a third untagged, the rest with 1..3 tags, three in four of them
 * their call's tag (so a call's entry of a tag names up to about 20 jobs: two entries of
 * JOBS_PER_ENTRY and fewer).
 */
function corpus(base: JobItem): JobItem[] {
  const pick = random(43);
  let createdAt = T0;
  return Array.from({ length: JOBS }, (_, i) => {
    const call = Math.floor(i / CALL);
    if (i % CALL === 0)
      createdAt = T0 + Math.floor(call / 2) * 40 * MINUTE + (call % 2 === 0 ? 0 : pick(2) * 40 * MINUTE);
    const id = ulid(createdAt);
    const status = STATUSES[pick(STATUSES.length)] as JobStatus;
    const tagCount = pick(3) === 0 ? 0 : 1 + pick(3);
    const callTag = TAGS[call % TAGS.length] as string;
    const tags = [
      ...new Set(
        Array.from({ length: tagCount }, (_, n) =>
          n === 0 && pick(4) !== 0 ? callTag : (TAGS[pick(TAGS.length)] as string),
        ),
      ),
    ];
    const finished = status === "done" || status === "dead" || status === "cancelled";
    const queue = pick(4) === 0 ? "other" : QUEUE;
    return {
      ...base,
      pk: `job#${id}`,
      id,
      kind: KINDS[pick(KINDS.length)] as string,
      queue,
      status,
      createdAt,
      runAt: createdAt,
      ...(tags.length ? { tags } : {}),
      ...(pick(5) === 0 ? { flowKey: `tenant-${pick(20)}` } : {}),
      // A kind of several limits' other keys (a user's): found by `key` as the first limit's are.
      ...(pick(7) === 0 ? { flowKeys: { user: `tenant-${pick(20)}` } } : {}),
      ...(status === "dead" || (finished && pick(4) === 0) ? { lastError: ERRORS[pick(ERRORS.length)] } : {}),
      ...(finished ? { finishedAt: createdAt + 1000 } : {}),
      ...(status === "dead" || status === "scheduled"
        ? indexKeys(queue, status, id, createdAt + 1000, SHARDS)
        : {}),
      ...formatStamp("job"),
    } as JobItem;
  });
}

/** The tagged ones of some jobs, as the tag index sees them. */
const asTagged = (jobs: readonly JobItem[]) =>
  jobs.flatMap((j) => taggedJob(j, 2_000_000_000) ?? []) as TaggedJob[];

async function writeAll(store: StoreContext, items: readonly object[]): Promise<void> {
  const batches = Array.from({ length: Math.ceil(items.length / 25) }, (_, i) =>
    items.slice(i * 25, i * 25 + 25),
  );
  for (let i = 0; i < batches.length; i += 8)
    await Promise.all(
      batches.slice(i, i + 8).map(async (batch) => {
        let requests = batch.map((Item) => ({ PutRequest: { Item } }));
        for (let round = 0; requests.length > 0; round++) {
          if (round > 20) throw new Error("BatchWriteItem kept leaving items unprocessed");
          const out = await store.doc.send(
            new BatchWriteCommand({ RequestItems: { [store.table]: requests } }),
          );
          requests = (out.UnprocessedItems?.[store.table] ?? []) as typeof requests;
        }
      }),
    );
}

/** Every job item of the table: a full scan, the test's own. */
async function scanJobs(store: StoreContext): Promise<JobItem[]> {
  const jobs: JobItem[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await store.doc.send(
      new ScanCommand({ TableName: store.table, ...(start ? { ExclusiveStartKey: start } : {}) }),
    );
    jobs.push(...((out.Items ?? []) as JobItem[]).filter((i) => i.sk === "job"));
    start = out.LastEvaluatedKey;
  } while (start);
  return jobs;
}

/** The answer a filter must give, worked out here from the scan, apart from the store's code. */
function expected(all: readonly JobItem[], f: SearchFilter): string[] {
  return all
    .filter(
      (j) =>
        (!f.tag || j.tags?.includes(f.tag)) &&
        (!f.kind || j.kind === f.kind) &&
        (!f.status || j.status === f.status) &&
        (!f.queue || j.queue === f.queue) &&
        (!f.key || j.flowKey === f.key || j.flowKeys?.user === f.key) &&
        (f.createdAfter === undefined || j.createdAt >= f.createdAfter) &&
        (f.createdBefore === undefined || j.createdAt < f.createdBefore) &&
        (!f.error || (j.lastError ?? "").includes(f.error)),
    )
    .sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1))
    .map((j) => j.id);
}

async function everyPage(store: StoreContext, f: SearchFilter, limit: number): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 500; page++) {
    const answer = await searchJobs(store, f, { limit, ...(cursor ? { cursor } : {}) });
    expect(answer.items.length).toBeLessThanOrEqual(limit);
    ids.push(...answer.items.map((j) => j.id));
    cursor = answer.cursor;
    if (!cursor) return ids;
  }
  throw new Error("the cursor never ended");
}

const HOUR = 60 * MINUTE;
/** The guide's filter combinations (docs/guide/finding-runs.md), each with the page size it pages by. */
const COMBINATIONS: [string, SearchFilter, number][] = [
  ["a tag", { tag: "tag-7" }, 40],
  ["a tag and a kind", { tag: "tag-7", kind: "email" }, 25],
  ["a tag and a status", { tag: "tag-12", status: "dead" }, 10],
  [
    "a tag in a time window",
    { tag: "tag-3", createdAfter: T0 + 10 * HOUR, createdBefore: T0 + 40 * HOUR },
    25,
  ],
  ["a tag and error text", { tag: "tag-21", error: "503" }, 5],
  ["a tag and a flow key", { tag: "tag-30", key: "tenant-4" }, 5],
  ["a tag, kind, status and window", { tag: "tag-9", kind: "sync", status: "done", createdAfter: T0 }, 5],
  ["a queue's dead jobs (status index)", { queue: QUEUE, status: "dead", kind: "report" }, 100],
  [
    "a queue's scheduled jobs in a window",
    { queue: "other", status: "scheduled", createdBefore: T0 + 50 * HOUR },
    50,
  ],
  ["a kind and a status (scan)", { kind: "resize", status: "cancelled", createdAfter: T0 + 60 * HOUR }, 100],
  ["a flow key (scan)", { key: "tenant-11", createdAfter: T0 + 30 * HOUR }, 100],
  ["error text since a time (scan)", { error: "timeout", createdAfter: T0 + 70 * HOUR }, 100],
];

onEveryBackend(({ setup }) => {
  describe("searchJobs over 10 000 jobs", () => {
    // Its time goes to writing 35 000 items and to the scans (DynamoDB Local: ~15 s and ~7 s each).
    it("answers every guide filter newest first with exactly the jobs a full scan finds", {
      timeout: 120_000,
    }, async () => {
      const { store, clock } = await setup();
      const jobs = corpus(jobItem(clock));
      // As the calls' enqueues write them: one entry for each tag a call's jobs share, JOBS_PER_ENTRY at most.
      const entries = Array.from({ length: JOBS / CALL }, (_, c) =>
        tagEntries(asTagged(jobs.slice(c * CALL, (c + 1) * CALL))),
      )
        .flat()
        .map((e) => ({ ...e, ...formatStamp("tagEntry") }));
      expect(entries.filter((e) => e.ids.length === JOBS_PER_ENTRY).length, "full entries").toBeGreaterThan(
        0,
      );
      await writeAll(store, [...jobs, ...entries]);
      const all = await scanJobs(store);
      expect(all).toHaveLength(JOBS);
      for (const [name, filter, limit] of COMBINATIONS) {
        const want = expected(all, filter);
        expect(want.length, `${name} matches some jobs`).toBeGreaterThan(0);
        expect(await everyPage(store, filter, limit), name).toEqual(want);
      }
      // No filter at all: the first page is the table's newest jobs.
      const first = await searchJobs(store, {}, { limit: 30 });
      expect(first.items.map((j) => j.id)).toEqual(expected(all, {}).slice(0, 30));
      expect(first.truncated).toBeUndefined();
      // A table past the scan's bound: a search without a tag answers the newest of the items it
      // read, said to be truncated; one with a tag still answers exactly.
      for (const filter of [{}, { kind: "echo" }, { queue: QUEUE, status: "done" as const }]) {
        const part = await searchJobs(store, filter, { limit: 5, maxScanned: 5_000 });
        expect(part.truncated, JSON.stringify(filter)).toBe(true);
        expect(part.items).toHaveLength(5);
        const places = part.items.map((j) => [j.createdAt, j.id] as const);
        expect(places).toEqual([...places].sort((a, b) => b[0] - a[0] || b[1].localeCompare(a[1])));
        const ids = new Set(expected(all, filter));
        expect(part.items.every((j) => ids.has(j.id))).toBe(true);
      }
      const tagged = await searchJobs(store, { tag: "tag-7" }, { limit: 5, maxScanned: 5_000 });
      expect(tagged.items.map((j) => j.id)).toEqual(expected(all, { tag: "tag-7" }).slice(0, 5));
      expect(tagged.truncated).toBeUndefined();
      // A cursor is bound to its search: another tag's, another filter's, a forged one are refused.
      const paged = await searchJobs(store, { tag: "tag-7" }, { limit: 5 });
      for (const other of [{ tag: "tag-8" }, { tag: "tag-7", kind: "echo" }, {}])
        expect(
          await storeErrorOf(searchJobs(store, other, { limit: 5, cursor: paged.cursor })),
        ).toBeInstanceOf(InvalidStoreInput);
    });

    it("pages a tag shared by eight calls of 25 jobs in one millisecond (entries that interleave) newest first, without a gap", async () => {
      const { store, clock } = await setup();
      const at = clock.now();
      const calls = Array.from({ length: 8 }, () =>
        Array.from({ length: 25 }, () => ({
          ...jobItem(clock, { id: ulid(at) }),
          createdAt: at,
          tags: ["burst"],
        })),
      );
      const entries = calls.flatMap((call) => tagEntries(asTagged(call)));
      expect(entries).toHaveLength(8 * Math.ceil(25 / JOBS_PER_ENTRY));
      await writeAll(store, [...calls.flat(), ...entries.map((e) => ({ ...e, ...formatStamp("tagEntry") }))]);
      const want = expected(calls.flat(), { tag: "burst" });
      for (const limit of [1, 3, 7, 40])
        expect(await everyPage(store, { tag: "burst" }, limit), `pages of ${limit}`).toEqual(want);
    });

    it("a search that runs out of its rounds answers a cursor the next call takes, and finds what lay past it", async () => {
      const { store, clock } = await setup();
      const at = clock.now();
      // 3 000 jobs of one tag that a status filter turns down, newer than the one it matches: a call
      // looks at 1 000 entries at most (at most 400 a round), so the first stops well before it.
      const crowd = Array.from({ length: 3_000 }, (_, i) => ({
        ...jobItem(clock, { id: ulid(at + 1 + i) }),
        createdAt: at + 1 + i,
        status: "done" as const,
        tags: ["crowd"],
      }));
      const sought = {
        ...jobItem(clock, { id: ulid(at) }),
        createdAt: at,
        status: "queued" as const,
        tags: ["crowd"],
      };
      const jobs = [sought, ...crowd];
      const entries = jobs.flatMap((j) => tagEntries(asTagged([j])));
      await writeAll(store, [...jobs, ...entries.map((e) => ({ ...e, ...formatStamp("tagEntry") }))]);
      const filter = { tag: "crowd", status: "queued" as const };
      const first = await searchJobs(store, filter, { limit: 5 });
      expect(first.items).toEqual([]);
      expect(first.cursor).toBeDefined();
      expect(await everyPage(store, filter, 5)).toEqual([sought.id]);
    });

    it("answers a job at its own place only: an entry left at another time by an enqueue of the same id that failed", async () => {
      const { store, clock } = await setup();
      const job = { ...jobItem(clock), tags: ["reused"] };
      const stale = tagEntries(asTagged([{ ...job, createdAt: job.createdAt - 60_000 }]));
      await writeAll(
        store,
        [job, ...tagEntries(asTagged([job])), ...stale].map((i) => ({ ...i, ...formatStamp("tagEntry") })),
      );
      for (const limit of [1, 10]) expect(await everyPage(store, { tag: "reused" }, limit)).toEqual([job.id]);
    });

    it("skips a tag entry whose job is gone, and finds a job by each of its tags", async () => {
      const { store, clock } = await setup();
      const kept = { ...jobItem(clock), tags: ["a", "b"] };
      const gone = { ...jobItem(clock, { id: ulid(clock.now() + 1) }), tags: ["a"] };
      await writeAll(store, [kept, ...tagEntries(asTagged([kept])), ...tagEntries(asTagged([gone]))]);
      for (const tag of ["a", "b"])
        expect((await searchJobs(store, { tag }, { limit: 10 })).items.map((j) => j.id)).toEqual([kept.id]);
    });
  });
});
