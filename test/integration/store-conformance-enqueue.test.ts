import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import type { StoreContext } from "../../lib/store/context.ts";
import {
  acquireUniqueLock,
  markQueued,
  putJob,
  releaseUniqueLock,
  takeOverUniqueLock,
} from "../../lib/store/enqueue-ops.ts";
import { cancel } from "../../lib/store/finalize-ops.ts";
import { uniqueKeyLock } from "../../lib/store/keys.ts";
import { claim } from "../../lib/store/lease-ops.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import { STORED_FORMATS } from "../../lib/store/stored-formats.ts";
import { seedOf } from "../support/jobs.ts";
import {
  claimed,
  jobItem,
  LEASE_MS,
  onEveryBackend,
  QUEUE,
  scheduledItem,
  TTL,
} from "../support/store-conformance.ts";

/**
 * Store conformance, putJob, the unique key lock and markQueued: how a job comes into the store.
 * Both DynamoDB emulators, a table per test: see test/support/store-conformance.ts.
 */
onEveryBackend(({ setup }) => {
  // ── enqueue ──────────────────────────────────────────────────────────────────────────────────────

  describe("putJob", () => {
    it("creates the item once; a second put with the same id reports the current item", async () => {
      const { store, clock } = await setup();
      const item = jobItem(clock);
      expect(await putJob(store, item)).toEqual({ created: true });
      // Stored with its format's version (docs/architecture.md §24).
      const stored = { ...item, fv: STORED_FORMATS.job };
      expect(await getJob(store, item.id)).toEqual(stored);

      const second = await putJob(store, {
        ...item,
        payload: JSON.stringify({ other: true }),
        maxAttempts: 9,
      });
      expect(second).toEqual({ created: false, current: stored });
      expect(await getJob(store, item.id)).toEqual(stored);
    });

    it("a late enqueue write loses to a worker that already built the job from its message", async () => {
      const { store, clock } = await setup();
      const item = jobItem(clock);
      const running = claimed(await claim(store, seedOf(item), "w", LEASE_MS));
      const put = await putJob(store, item);
      expect(put.created).toBe(false);
      if (put.created) return;
      expect(put.current).toEqual(running);
    });
  });

  describe("unique key lock", () => {
    async function lockHolder(store: StoreContext, uniqueKey: string): Promise<string | undefined> {
      const out = await store.doc.send(
        new GetCommand({
          TableName: store.table,
          Key: uniqueKeyLock(QUEUE, uniqueKey),
          ConsistentRead: true,
        }),
      );
      return out.Item?.jobId as string | undefined;
    }

    it("acquire, conflict names the holder, takeover only from the matching holder, release only by the owner", async () => {
      const { store, clock } = await setup();
      expect(await acquireUniqueLock(store, QUEUE, "k", "job-a", TTL)).toEqual({ acquired: true });

      const conflict = await acquireUniqueLock(store, QUEUE, "k", "job-b", TTL);
      expect(conflict.acquired).toBe(false);
      if (conflict.acquired) return;
      expect(conflict.holder.jobId).toBe("job-a");
      expect(conflict.holder.createdAt).toBe(clock.now());

      // Same key on another queue is a different lock.
      expect(await acquireUniqueLock(store, "other", "k", "job-z", TTL)).toEqual({ acquired: true });

      // Takeover naming the wrong previous holder fails and changes nothing.
      expect(await takeOverUniqueLock(store, QUEUE, "k", "job-x", "job-b", TTL)).toBe(false);
      expect(await lockHolder(store, "k")).toBe("job-a");
      // Takeover of a lock that doesn't exist fails too.
      expect(await takeOverUniqueLock(store, QUEUE, "nope", "job-a", "job-b", TTL)).toBe(false);
      expect(await lockHolder(store, "nope")).toBeUndefined();

      clock.advance(1000);
      expect(await takeOverUniqueLock(store, QUEUE, "k", "job-a", "job-b", TTL)).toBe(true);
      expect(await lockHolder(store, "k")).toBe("job-b");
      // A second taker that still thinks job-a holds it loses.
      expect(await takeOverUniqueLock(store, QUEUE, "k", "job-a", "job-c", TTL)).toBe(false);
      expect(await lockHolder(store, "k")).toBe("job-b");

      // Release by a non-owner is a no-op.
      await releaseUniqueLock(store, QUEUE, "k", "job-a");
      expect(await lockHolder(store, "k")).toBe("job-b");
      // Release by the owner frees the key for the next job.
      await releaseUniqueLock(store, QUEUE, "k", "job-b");
      expect(await lockHolder(store, "k")).toBeUndefined();
      // Releasing an absent lock is a no-op too.
      await releaseUniqueLock(store, QUEUE, "k", "job-b");
      expect(await acquireUniqueLock(store, QUEUE, "k", "job-c", TTL)).toEqual({ acquired: true });
      expect(await lockHolder(store, "k")).toBe("job-c");
    });

    it("of concurrent acquirers and concurrent takers, exactly one wins", async () => {
      const { store } = await setup();
      const acquires = await Promise.all(
        ["a", "b", "c", "d"].map((id) => acquireUniqueLock(store, QUEUE, "race", `job-${id}`, TTL)),
      );
      const winners = acquires.flatMap((r, i) => (r.acquired ? [`job-${"abcd"[i]}`] : []));
      expect(winners).toHaveLength(1);
      for (const r of acquires) if (!r.acquired) expect(r.holder.jobId).toBe(winners[0]);

      const takes = await Promise.all(
        ["x", "y", "z"].map((id) =>
          takeOverUniqueLock(store, QUEUE, "race", winners[0] as string, `job-${id}`, TTL),
        ),
      );
      expect(takes.filter(Boolean)).toHaveLength(1);
      expect(await lockHolder(store, "race")).toBe(`job-${"xyz"[takes.indexOf(true)]}`);
    });
  });

  describe("markQueued", () => {
    it("moves a scheduled job out of the index only when still scheduled for the same runAt", async () => {
      const { store, clock } = await setup();
      const runAt = clock.now() + 3_600_000;
      const item = scheduledItem(clock, runAt);
      await putJob(store, item);

      expect(await markQueued(store, item.id, runAt + 1)).toBe(false);
      expect((await getJob(store, item.id))?.status).toBe("scheduled");

      expect(await markQueued(store, item.id, runAt)).toBe(true);
      const queued = await getJob(store, item.id);
      expect(queued?.status).toBe("queued");
      expect(queued?.runAt).toBe(runAt);
      expect(queued?.gsi1pk).toBeUndefined();
      expect(queued?.gsi1sk).toBeUndefined();

      // No longer scheduled: a second (duplicate reaper) call is a no-op.
      expect(await markQueued(store, item.id, runAt)).toBe(false);
      // A missing job is a no-op too.
      expect(await markQueued(store, "missing", runAt)).toBe(false);
    });

    it("loses to a claim or a cancel that got there first", async () => {
      const { store, clock } = await setup();
      const runAt = clock.now();
      const a = scheduledItem(clock, runAt);
      const b = scheduledItem(clock, runAt);
      await putJob(store, a);
      await putJob(store, b);
      claimed(await claim(store, seedOf(a), "w", LEASE_MS));
      await cancel(store, b.id, TTL);
      expect(await markQueued(store, a.id, runAt)).toBe(false);
      expect(await markQueued(store, b.id, runAt)).toBe(false);
      expect((await getJob(store, a.id))?.status).toBe("running");
      expect((await getJob(store, b.id))?.status).toBe("cancelled");
    });
  });

  // ── claim ────────────────────────────────────────────────────────────────────────────────────────
});
