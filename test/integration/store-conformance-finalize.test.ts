import { ulid } from "ulid";
import { describe, expect, it } from "vitest";
import { cancel, type Finalization, finalize } from "../../lib/store/finalize-ops.ts";
import type { JobItem } from "../../lib/store/job-item.ts";
import { indexKeys, indexPartition, shardOf } from "../../lib/store/keys.ts";
import { claim } from "../../lib/store/lease-ops.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import { seedOf } from "../support/jobs.ts";
import {
  approximateItemBytes,
  claimed,
  LEASE_MS,
  onEveryBackend,
  payloadOfBytes,
  QUEUE,
  SHARDS,
  TTL,
} from "../support/store-conformance.ts";

/**
 * Store conformance, finalize: every outcome a run ends with, and the races it loses.
 * Both DynamoDB emulators, a table per test: see test/support/store-conformance.ts.
 */
onEveryBackend(({ capacity, listAll, runningJob, setup }) => {
  describe("finalize", () => {
    it("done: stores the result, finishedAt and TTL, drops the lease", async () => {
      const { store, clock } = await setup();
      const { item } = await runningJob(store, clock, "t");
      clock.advance(250);
      const r = await finalize(store, item, "t", {
        outcome: "done",
        result: { json: '{"ok":1}' },
        expiresAt: TTL,
      });
      expect(r.finalized).toBe(true);
      const done = await getJob(store, item.id);
      expect(done).toMatchObject({
        status: "done",
        result: '{"ok":1}',
        finishedAt: clock.now(),
        expiresAt: TTL,
        attempts: 1,
      });
      expect(done?.leaseToken).toBeUndefined();
      expect(done?.leaseUntil).toBeUndefined();
      if (r.finalized) expect(r.item).toEqual(done);
    });

    it("done keeps a 256-byte-payload job item under 1 KB (1 WCU per write)", async () => {
      const { store, clock, table } = await setup();
      const payload = payloadOfBytes(256);
      const { item } = await runningJob(store, clock, ulid(), {
        payload,
        uniqueKey: "order-12345",
        timeoutSeconds: 300,
      });
      const token = (await getJob(store, item.id))?.leaseToken as string;
      const before = capacity.length;
      // An echo-like handler: the result is as large as the payload.
      const r = await finalize(store, item, token, {
        outcome: "done",
        result: { json: payload },
        expiresAt: TTL,
      });
      expect(r.finalized).toBe(true);
      const done = (await getJob(store, item.id)) as JobItem;
      const bytes = approximateItemBytes(done as unknown as Record<string, unknown>);
      expect(bytes).toBeGreaterThan(2 * 256);
      expect(bytes).toBeLessThan(1024);

      const writes = capacity
        .slice(before)
        .filter((c) => c.table === table && c.command === "UpdateItemCommand");
      expect(writes).toHaveLength(1);
      expect(writes[0]?.units).toBe(1);
    });

    it("retry: back to queued at runAt with lastError, lease dropped; the next claim is attempt 2", async () => {
      const { store, clock } = await setup();
      const { item } = await runningJob(store, clock, "t");
      const runAt = clock.now() + 5_000;
      const r = await finalize(store, item, "t", { outcome: "retry", runAt, error: "boom" });
      expect(r.finalized).toBe(true);
      const queued = await getJob(store, item.id);
      expect(queued).toMatchObject({ status: "queued", runAt, lastError: "boom", attempts: 1 });
      expect(queued?.leaseToken).toBeUndefined();
      expect(queued?.leaseUntil).toBeUndefined();
      expect(queued?.gsi1pk).toBeUndefined();

      expect((await claim(store, seedOf(item), "t2", LEASE_MS)).claimed).toBe(false);
      clock.set(runAt);
      expect(claimed(await claim(store, seedOf(item), "t2", LEASE_MS))).toMatchObject({
        attempts: 2,
        claimedFrom: "queued",
        leaseToken: "t2",
      });
    });

    it("reschedule: scheduled at runAt and findable in the scheduled index", async () => {
      const { store, clock } = await setup();
      const { item } = await runningJob(store, clock, "t");
      const runAt = clock.now() + 24 * 3_600_000;
      const r = await finalize(store, item, "t", { outcome: "reschedule", runAt, error: "later" });
      expect(r.finalized).toBe(true);
      const scheduled = await getJob(store, item.id);
      expect(scheduled).toMatchObject({
        status: "scheduled",
        runAt,
        lastError: "later",
        ...indexKeys(QUEUE, "scheduled", item.id, runAt, SHARDS),
      });
      expect(scheduled?.gsi1pk).toBe(indexPartition(QUEUE, "scheduled", shardOf(item.id, SHARDS)));
      expect(scheduled?.leaseToken).toBeUndefined();
      const listed = (await listAll(store, { queue: QUEUE, status: "scheduled" }, 10)).flat();
      expect(listed.map((j) => j.id)).toEqual([item.id]);
    });

    it("throttled: back to queued without spending the attempt", async () => {
      const { store, clock } = await setup();
      const { item } = await runningJob(store, clock, "t");
      const runAt = clock.now() + 30_000;
      const r = await finalize(store, item, "t", { outcome: "throttled", runAt, reason: "rate limited" });
      expect(r.finalized).toBe(true);
      const queued = await getJob(store, item.id);
      expect(queued).toMatchObject({ status: "queued", runAt, attempts: 0 });
      expect(queued?.leaseToken).toBeUndefined();
      clock.set(runAt);
      expect(claimed(await claim(store, seedOf(item), "t2", LEASE_MS)).attempts).toBe(1);
    });

    it("dead: lastError, TTL, in the dead index; listJobs(queue, dead) finds it", async () => {
      const { store, clock } = await setup();
      const { item } = await runningJob(store, clock, "t");
      clock.advance(100);
      const r = await finalize(store, item, "t", { outcome: "dead", error: "fatal", expiresAt: TTL });
      expect(r.finalized).toBe(true);
      const dead = await getJob(store, item.id);
      expect(dead).toMatchObject({
        status: "dead",
        lastError: "fatal",
        finishedAt: clock.now(),
        expiresAt: TTL,
        ...indexKeys(QUEUE, "dead", item.id, clock.now(), SHARDS),
      });
      expect(dead?.leaseToken).toBeUndefined();
      const listed = (await listAll(store, { queue: QUEUE, status: "dead" }, 10)).flat();
      expect(listed).toEqual([dead]);
      expect((await listAll(store, { queue: QUEUE, status: "scheduled" }, 10)).flat()).toEqual([]);
      expect((await listAll(store, { queue: "other", status: "dead" }, 10)).flat()).toEqual([]);
    });

    it("cancelled: terminal with finishedAt, TTL and the reason", async () => {
      const { store, clock } = await setup();
      const { item } = await runningJob(store, clock, "t");
      const r = await finalize(store, item, "t", { outcome: "cancelled", expiresAt: TTL, error: "aborted" });
      expect(r.finalized).toBe(true);
      const cancelled = await getJob(store, item.id);
      expect(cancelled).toMatchObject({
        status: "cancelled",
        finishedAt: clock.now(),
        expiresAt: TTL,
        lastError: "aborted",
      });
      expect(cancelled?.leaseToken).toBeUndefined();
      expect((await claim(store, seedOf(item), "again", LEASE_MS)).claimed).toBe(false);
    });

    const outcomes: [string, (now: number) => Finalization][] = [
      ["done", () => ({ outcome: "done", result: { json: "1" }, expiresAt: TTL })],
      ["retry", (now) => ({ outcome: "retry", runAt: now + 1000, error: "e" })],
      ["reschedule", (now) => ({ outcome: "reschedule", runAt: now + 86_400_000, error: "e" })],
      ["throttled", (now) => ({ outcome: "throttled", runAt: now + 1000, reason: "r" })],
      ["dead", () => ({ outcome: "dead", error: "e", expiresAt: TTL })],
      ["cancelled", () => ({ outcome: "cancelled", expiresAt: TTL })],
    ];

    it.each(outcomes)(
      "%s after losing the lease: lease_lost, the new owner's item untouched",
      async (_name, make) => {
        const { store, clock } = await setup();
        const { item } = await runningJob(store, clock, "old");
        clock.advance(LEASE_MS + 1);
        const revived = claimed(await claim(store, seedOf(item), "new", LEASE_MS));
        const r = await finalize(store, item, "old", make(clock.now()));
        expect(r).toEqual({ finalized: false, reason: "lease_lost", current: revived });
        expect(await getJob(store, item.id)).toEqual(revived);
        // The new owner can still finish.
        expect((await finalize(store, item, "new", make(clock.now()))).finalized).toBe(true);
      },
    );

    it("lease_lost when the job no longer exists", async () => {
      const { store, clock } = await setup();
      const r = await finalize(store, { id: "missing", queue: QUEUE }, "t", {
        outcome: "retry",
        runAt: clock.now(),
        error: "e",
      });
      expect(r).toEqual({ finalized: false, reason: "lease_lost", current: undefined });
      expect(await getJob(store, "missing")).toBeUndefined();
    });

    it.each(outcomes.filter(([n]) => n !== "done" && n !== "cancelled"))(
      "%s when a cancel was requested: cancel_requested, then cancelled wins",
      async (_name, make) => {
        const { store, clock } = await setup();
        const { item } = await runningJob(store, clock, "t");
        await cancel(store, item.id, TTL);
        const before = await getJob(store, item.id);
        const r = await finalize(store, item, "t", make(clock.now()));
        expect(r.finalized).toBe(false);
        if (r.finalized) return;
        expect(r.reason).toBe("cancel_requested");
        expect(r.current).toEqual(before);
        expect(await getJob(store, item.id)).toEqual(before);

        const c = await finalize(store, item, "t", { outcome: "cancelled", expiresAt: TTL });
        expect(c.finalized).toBe(true);
        expect((await getJob(store, item.id))?.status).toBe("cancelled");
      },
    );

    it("done still wins when a cancel was requested during the run (done stays done)", async () => {
      const { store, clock } = await setup();
      const { item } = await runningJob(store, clock, "t");
      await cancel(store, item.id, TTL);
      const r = await finalize(store, item, "t", { outcome: "done", result: { json: "42" }, expiresAt: TTL });
      expect(r.finalized).toBe(true);
      expect((await getJob(store, item.id))?.status).toBe("done");
    });
  });

  // ── cancel ───────────────────────────────────────────────────────────────────────────────────────
});
