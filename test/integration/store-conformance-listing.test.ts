import { BatchWriteCommand } from "@aws-sdk/lib-dynamodb";
import { ulid } from "ulid";
import { describe, expect, it } from "vitest";
import { tableLayout } from "../../lib/declarations/scale.ts";
import { InvalidStoreInput } from "../../lib/errors.ts";
import { putJob } from "../../lib/store/enqueue-ops.ts";
import { indexKeys, indexPartition, jobKey, shardOf } from "../../lib/store/keys.ts";
import { listJobs } from "../../lib/store/read-ops.ts";
import {
  jobItem,
  onEveryBackend,
  QUEUE,
  SHARDS,
  scheduledItem,
  storeErrorOf,
} from "../support/store-conformance.ts";

/**
 * Store conformance, listJobs: paging every index by cursor, and what a page costs.
 * Both DynamoDB emulators, a table per test: see test/support/store-conformance.ts.
 */
onEveryBackend(({ capacity, listAll, setup }) => {
  describe("listJobs", () => {
    it("pages the sharded scheduled index by cursor with no duplicates or gaps", async () => {
      const { store, clock } = await setup();
      const base = clock.now() + 3_600_000;
      const wanted = Array.from({ length: 23 }, (_, i) => scheduledItem(clock, base + i * 1000));
      const noise = [
        scheduledItem(clock, base, { queue: "other" }),
        jobItem(clock), // queued: not indexed
      ];
      for (const item of [...wanted, ...noise]) await putJob(store, item);
      // The fixture really spreads over several shards.
      expect(new Set(wanted.map((j) => shardOf(j.id, SHARDS))).size).toBeGreaterThanOrEqual(3);

      const pages = await listAll(store, { queue: QUEUE, status: "scheduled" }, 5);
      const ids = pages.flat().map((j) => j.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect([...ids].sort()).toEqual(wanted.map((j) => j.id).sort());
      expect(pages.length).toBeGreaterThanOrEqual(Math.ceil(wanted.length / 5));
      // Within a shard, items come in runAt order.
      for (const shard of new Set(wanted.map((j) => shardOf(j.id, SHARDS)))) {
        const runAts = pages
          .flat()
          .filter((j) => shardOf(j.id, SHARDS) === shard)
          .map((j) => j.runAt);
        expect(runAts).toEqual([...runAts].sort((a, b) => a - b));
      }
    });

    it("a layout built for a higher rate spreads the index over more shards, and lists every one of them", async () => {
      const { store: base, clock } = await setup();
      const store = { ...base, layout: tableLayout({ jobsPerSecond: 10_000 }) };
      const shards = store.layout.indexShards;
      expect(shards).toBeGreaterThan(SHARDS);
      const at = clock.now() + 3_600_000;
      const wanted = Array.from({ length: 60 }, (_, i) =>
        jobItem(clock, { status: "scheduled", runAt: at + i }),
      ).map((j) => ({ ...j, ...indexKeys(QUEUE, "scheduled", j.id, j.runAt, shards) }));
      for (const item of wanted) await putJob(store, item);
      // Some land in shards the default layout doesn't have: a reader of 8 shards would miss them.
      expect(wanted.some((j) => shardOf(j.id, shards) >= SHARDS)).toBe(true);
      const ids = (await listAll(store, { queue: QUEUE, status: "scheduled" }, 7)).flat().map((j) => j.id);
      expect([...ids].sort()).toEqual(wanted.map((j) => j.id).sort());
      // A cursor past this layout's last shard is not one the API returned.
      const past = Buffer.from(JSON.stringify({ shard: shards })).toString("base64url");
      const err = await storeErrorOf(
        listJobs(store, { queue: QUEUE, status: "scheduled", limit: 5, cursor: past }),
      );
      expect(err.message).toMatch(/cursor is not one this API returned/);
    });

    it("pages a status scan by cursor with no duplicates or gaps, across scan pages", async () => {
      const { store, clock, table } = await setup();
      const queued = Array.from({ length: 17 }, () => jobItem(clock));
      const otherQueue = Array.from({ length: 3 }, () => jobItem(clock, { queue: "other" }));
      for (const item of [...queued, ...otherQueue]) await putJob(store, item);
      // Filler the filter must skip: more than one 200-item scan page of done jobs.
      const filler = Array.from({ length: 230 }, () => ({ ...jobItem(clock), status: "done" as const }));
      for (let i = 0; i < filler.length; i += 25) {
        const chunk = filler.slice(i, i + 25);
        const out = await store.doc.send(
          new BatchWriteCommand({
            RequestItems: { [table]: chunk.map((Item) => ({ PutRequest: { Item } })) },
          }),
        );
        expect(Object.keys(out.UnprocessedItems ?? {})).toHaveLength(0);
      }

      for (const [filter, expected] of [
        [{ status: "queued" as const }, [...queued, ...otherQueue]],
        [{ status: "queued" as const, queue: QUEUE }, queued],
        [{ queue: "other" }, otherQueue],
      ] as const) {
        const pages = await listAll(store, filter, 4);
        const ids = pages.flat().map((j) => j.id);
        expect(new Set(ids).size).toBe(ids.length);
        expect([...ids].sort()).toEqual(expected.map((j) => j.id).sort());
      }
    });

    it("rejects a cursor it did not issue, of any shape, before DynamoDB sees it", async () => {
      const { store, clock } = await setup();
      const id = ulid();
      await putJob(store, scheduledItem(clock, clock.now() + 3_600_000, { id }));
      const indexKey = { ...jobKey(id), gsi1pk: indexPartition(QUEUE, "scheduled", 0), gsi1sk: `0#${id}` };
      const encoded = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
      const wrongIndexCursors = [
        "%%%not-base64-json",
        encoded(null),
        encoded([]),
        encoded({}),
        encoded({ shard: -1 }),
        encoded({ shard: -1e308 }),
        encoded({ shard: 1e308 }),
        encoded({ shard: SHARDS }),
        encoded({ shard: 0.5 }),
        encoded({ shard: "0" }),
        encoded({ shard: 0, extra: true }),
        encoded({ shard: 0, key: null }),
        encoded({ shard: 0, key: jobKey(id) }),
        encoded({ shard: 0, key: { ...indexKey, extra: "x" } }),
        encoded({ shard: 0, key: { ...indexKey, gsi1pk: indexPartition("other", "scheduled", 0) } }),
        encoded({ shard: 0, key: { ...indexKey, gsi1pk: indexPartition(QUEUE, "dead", 0) } }),
        encoded({ shard: 1, key: indexKey }),
        encoded({ shard: 0, key: { ...indexKey, pk: 7 } }),
        encoded({ shard: 0, key: { ...indexKey, sk: "" } }),
        encoded({ shard: 0, key: { ...indexKey, gsi1sk: "\uD800" } }),
        encoded({ shard: 0, key: { ...indexKey, pk: `job#${"x".repeat(2100)}` } }),
      ];
      const wrongScanCursors = [
        encoded(null),
        encoded({ key: null }),
        encoded({ key: { pk: "x" } }),
        encoded({ key: indexKey }),
        encoded({ key: { pk: 1, sk: 2 } }),
        encoded({ key: { pk: "", sk: "job" } }),
        encoded({ key: { pk: "x".repeat(2100), sk: "job" } }),
        encoded({ key: { pk: "x", sk: "y".repeat(1100) } }),
        encoded({ key: jobKey(id), shard: 0 }),
        encoded({ shard: 0 }),
      ];
      const requestsBefore = capacity.length;
      for (const cursor of wrongIndexCursors) {
        const err = await storeErrorOf(
          listJobs(store, { queue: QUEUE, status: "scheduled", limit: 5, cursor }),
        );
        expect(err, cursor).toBeInstanceOf(InvalidStoreInput);
      }
      for (const cursor of wrongScanCursors) {
        const err = await storeErrorOf(listJobs(store, { status: "queued", limit: 5, cursor }));
        expect(err, cursor).toBeInstanceOf(InvalidStoreInput);
      }
      expect(capacity.length).toBe(requestsBefore);
    });

    it("takes back any cursor of the right shape, and bounds the work of one call", async () => {
      const { store, clock } = await setup();
      const jobs = Array.from({ length: 12 }, (_, i) => scheduledItem(clock, clock.now() + 3_600_000 + i));
      for (const item of jobs) await putJob(store, item);
      const encoded = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
      // Never issued, yet each names a resumable place: the emulator must take it as a start key.
      const id = ulid();
      const shard = 3;
      const indexCursor = encoded({
        shard,
        key: {
          ...jobKey(id),
          gsi1pk: indexPartition(QUEUE, "scheduled", shard),
          gsi1sk: `000000000000001#${id}`,
        },
      });
      const requestsBefore = capacity.length;
      const fromIndex = await listJobs(store, {
        queue: QUEUE,
        status: "scheduled",
        limit: 100,
        cursor: indexCursor,
      });
      const queries = capacity.length - requestsBefore;
      expect(queries).toBeGreaterThan(0);
      // At most one Query per shard left, plus a few: whatever the cursor says.
      expect(queries).toBeLessThanOrEqual(SHARDS + 4);
      expect(fromIndex.items.every((j) => shardOf(j.id, SHARDS) >= shard)).toBe(true);
      for (const key of [
        { pk: "queue#default", sk: "state" },
        jobKey(id),
        { pk: "\u{1F680}", sk: "\uFFFF" },
      ]) {
        const before = capacity.length;
        const page = await listJobs(store, { status: "queued", limit: 5, cursor: encoded({ key }) });
        expect(page.items.length).toBeLessThanOrEqual(5);
        expect(capacity.length - before).toBeLessThanOrEqual(4);
      }
    });
  });
});
