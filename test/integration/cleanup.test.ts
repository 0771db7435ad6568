import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { Cleanup } from "../../lib/ops/cleanup.ts";
import { QueueAdmin } from "../../lib/ops/queue-admin.ts";
import { retentionExpiry } from "../../lib/retention.ts";
import { purgeJob } from "../../lib/store/cleanup-ops.ts";
import { acquireUniqueLock, putJob, putPayload } from "../../lib/store/enqueue-ops.ts";
import { finalize } from "../../lib/store/finalize-ops.ts";
import type { JobItem } from "../../lib/store/job-item.ts";
import { payloadKey, queueStateKey, uniqueKeyLock } from "../../lib/store/keys.ts";
import { claim } from "../../lib/store/lease-ops.ts";
import { coolDown, setQueueConfig } from "../../lib/store/queue-state.ts";
import { getJob, listJobs } from "../../lib/store/read-ops.ts";
import { redrive } from "../../lib/store/redrive-ops.ts";
import { ManualClock } from "../support/clock.ts";
import { type Harness, harnessPerTest } from "../support/engine-harness.ts";
import { finishedJob, queuedItem, runningJob, seedOf } from "../support/jobs.ts";

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
/** The default queue's declared retention: done 7 days, dead (and cancelled) 30. */
const DONE_DAYS = 7;
const DEAD_DAYS = 30;

const harness = harnessPerTest();

const getRaw = (h: Harness, key: { pk: string; sk: string }) =>
  h.engine.store.doc
    .send(new GetCommand({ TableName: h.engine.store.table, Key: key, ConsistentRead: true }))
    .then((out) => out.Item);

/** One job of each terminal status, finished now, with the TTLs the worker and API would set. */
async function finishedTrio(h: Harness, clock: ManualClock) {
  const { store } = h.engine;
  const now = clock.now();
  const done = await finishedJob(store, queuedItem(clock), "done", retentionExpiry(now, DONE_DAYS));
  const dead = await finishedJob(store, queuedItem(clock), "dead", retentionExpiry(now, DEAD_DAYS));
  const cancelled = await finishedJob(store, queuedItem(clock), "cancelled", retentionExpiry(now, DEAD_DAYS));
  expect([done.status, dead.status, cancelled.status]).toEqual(["done", "dead", "cancelled"]);
  return { done, dead, cancelled };
}

const exists = async (h: Harness, job: JobItem) => (await getJob(h.engine.store, job.id)) !== undefined;

describe("cleanup on dynalite", () => {
  it("purges each terminal status after its own retention", async () => {
    const clock = new ManualClock();
    const h = await harness.create({ clock });
    const { done, dead, cancelled } = await finishedTrio(h, clock);
    // Jobs still in flight are never touched, however old.
    const queued = queuedItem(clock);
    await putJob(h.engine.store, queued);
    const running = (await runningJob(h.engine.store, queuedItem(clock))).item;
    const cleanup = new Cleanup(h.engine, { sweepItemsPerRun: 1000 });

    clock.advance(DONE_DAYS * DAY_MS - HOUR_MS);
    expect(await cleanup.run()).toMatchObject({ purgedDone: 0, purgedDead: 0, purgedCancelled: 0 });
    expect(await exists(h, done)).toBe(true);

    clock.advance(2 * HOUR_MS); // past done's 7 days, far from dead's 30
    const first = await cleanup.run();
    expect(first).toMatchObject({ purgedDone: 1, purgedDead: 0, purgedCancelled: 0, purgedExpired: 0 });
    expect(first.swept).toBeGreaterThan(0);
    expect(await exists(h, done)).toBe(false);
    expect(await exists(h, dead)).toBe(true);
    expect(await exists(h, cancelled)).toBe(true);

    clock.advance((DEAD_DAYS - DONE_DAYS) * DAY_MS - 2 * HOUR_MS); // 30 days less an hour
    expect(await cleanup.run()).toMatchObject({ purgedDone: 0, purgedDead: 0, purgedCancelled: 0 });

    clock.advance(2 * HOUR_MS);
    expect(await cleanup.run()).toMatchObject({ purgedDone: 0, purgedDead: 1, purgedCancelled: 1 });
    expect(await exists(h, dead)).toBe(false);
    expect(await exists(h, cancelled)).toBe(false);
    expect((await listJobs(h.engine.store, { queue: "default", status: "dead", limit: 10 })).items).toEqual(
      [],
    );

    clock.advance(365 * DAY_MS);
    expect(await cleanup.run()).toMatchObject({ purgedDone: 0, purgedDead: 0, purgedCancelled: 0 });
    expect(await getJob(h.engine.store, queued.id)).toMatchObject({ status: "queued" });
    expect(await getJob(h.engine.store, running.id)).toMatchObject({ status: "running" });
    expect(h.metrics.total("purged")).toBe(3);
  });

  it("a PATCHed dead retention takes effect on the next run", async () => {
    const clock = new ManualClock();
    const h = await harness.create({ clock });
    const { done, dead, cancelled } = await finishedTrio(h, clock);
    const cleanup = new Cleanup(h.engine, { sweepItemsPerRun: 1000 });

    clock.advance(2 * DAY_MS);
    expect(await cleanup.run()).toMatchObject({ purgedDone: 0, purgedDead: 0, purgedCancelled: 0 });

    const view = await new QueueAdmin(h.engine).patch("default", { retentionDays: { dead: 1 } });
    expect(view.retentionDays).toEqual({ done: DONE_DAYS, dead: 1 });
    expect(await cleanup.run()).toMatchObject({ purgedDone: 0, purgedDead: 1, purgedCancelled: 1 });
    expect(await exists(h, dead)).toBe(false);
    expect(await exists(h, cancelled)).toBe(false);
    expect(await exists(h, done)).toBe(true);
    // The override lives in the queue's state item, which no cleanup removes.
    expect(await getRaw(h, queueStateKey("default"))).toMatchObject({ retentionDeadDays: 1 });
  });

  it("never purges a dead job that was redriven after it was read", async () => {
    const clock = new ManualClock();
    const h = await harness.create({ clock });
    const { store } = h.engine;
    const expiry = retentionExpiry(clock.now(), DEAD_DAYS);
    const redriven = await finishedJob(store, queuedItem(clock), "dead", expiry);
    const raced = await finishedJob(store, queuedItem(clock), "dead", expiry);
    const control = await finishedJob(store, queuedItem(clock), "dead", expiry);
    clock.advance((DEAD_DAYS + 1) * DAY_MS);

    // An operator retries one before the run: it left the dead index, the run can't see it.
    await redrive(store, redriven, clock.now());
    // The other is read as dead (what the run's index query returns), then redriven.
    const stale = (await getJob(store, raced.id)) as JobItem;
    await redrive(store, raced, clock.now());
    expect(await purgeJob(store, stale)).toBe(false);
    expect(await getJob(store, raced.id)).toMatchObject({ status: "scheduled", attempts: 0 });

    expect(await new Cleanup(h.engine, { sweepItemsPerRun: 1000 }).run()).toMatchObject({
      purgedDead: 1,
      purgedDone: 0,
      purgedCancelled: 0,
    });
    expect(await exists(h, control)).toBe(false);
    expect(await getJob(store, redriven.id)).toMatchObject({ status: "scheduled" });
    expect(await getJob(store, raced.id)).toMatchObject({ status: "scheduled" });
    // The condition, not luck: the same stale read still fails after the run.
    expect(await purgeJob(store, stale)).toBe(false);
  });

  it("purging a large-payload job also removes its payload item", async () => {
    const clock = new ManualClock();
    const h = await harness.create({ clock });
    const { store } = h.engine;
    const big = { blob: "x".repeat(1000) };
    const enqueue = async () => {
      const { job } = await h.engine.producer.enqueue({ kind: "echo", payload: big });
      const item = (await getJob(store, job.id)) as JobItem;
      expect(item.payloadRef).toBe(true);
      expect(item.payload).toBeUndefined();
      expect(await getRaw(h, payloadKey(job.id))).toMatchObject({ payload: JSON.stringify(big) });
      return item;
    };
    // Drive both through the store as the worker would: one to done (sweep), one to dead (index).
    const finish = async (item: JobItem, outcome: "done" | "dead") => {
      const token = `t-${item.id}`;
      expect((await claim(store, seedOf(item), token, 60_000)).claimed).toBe(true);
      const expiresAt = retentionExpiry(clock.now(), outcome === "done" ? DONE_DAYS : DEAD_DAYS);
      const f = await finalize(
        store,
        item,
        token,
        outcome === "done"
          ? { outcome, result: { json: "1" }, expiresAt }
          : { outcome, error: "boom", expiresAt },
      );
      expect(f.finalized).toBe(true);
    };
    const done = await enqueue();
    const dead = await enqueue();
    await finish(done, "done");
    await finish(dead, "dead");

    clock.advance((DEAD_DAYS + 1) * DAY_MS - HOUR_MS); // past both retentions, before the payloads' TTL
    const report = await new Cleanup(h.engine, { sweepItemsPerRun: 1000 }).run();
    expect(report).toMatchObject({ purgedDone: 1, purgedDead: 1, purgedExpired: 0 });
    for (const job of [done, dead]) {
      expect(await getJob(store, job.id)).toBeUndefined();
      expect(await getRaw(h, payloadKey(job.id))).toBeUndefined();
    }
  });

  it("sweeps expired helper items and leaves items without a TTL", async () => {
    const clock = new ManualClock();
    const h = await harness.create({ clock });
    const { store } = h.engine;
    const nowSeconds = Math.floor(clock.now() / 1000);
    await acquireUniqueLock(store, "default", "old-key", "job-a", nowSeconds + 3600);
    await acquireUniqueLock(store, "default", "live-key", "job-b", nowSeconds + 30 * 86_400);
    await putPayload(store, "orphan-payload", '"big"', nowSeconds + 3600);
    await setQueueConfig(store, "default", { maxConcurrency: 5 });
    await coolDown(store, "default", clock.now() + 60_000);

    const cleanup = new Cleanup(h.engine, { sweepItemsPerRun: 1000 });
    expect((await cleanup.run()).purgedExpired).toBe(0);
    clock.advance(2 * HOUR_MS);
    const report = await cleanup.run();
    expect(report).toMatchObject({ purgedExpired: 2, purgedDone: 0, purgedDead: 0, purgedCancelled: 0 });
    expect(await getRaw(h, uniqueKeyLock("default", "old-key"))).toBeUndefined();
    expect(await getRaw(h, payloadKey("orphan-payload"))).toBeUndefined();
    expect(await getRaw(h, uniqueKeyLock("default", "live-key"))).toMatchObject({ jobId: "job-b" });
    expect(await getRaw(h, queueStateKey("default"))).toMatchObject({ maxConcurrency: 5 });

    clock.advance(3650 * DAY_MS);
    expect((await cleanup.run()).purgedExpired).toBe(1);
    expect(await getRaw(h, uniqueKeyLock("default", "live-key"))).toBeUndefined();
    expect(await getRaw(h, queueStateKey("default"))).toMatchObject({ maxConcurrency: 5 });
  });

  it("with the sweep off (the AWS setting) leaves done jobs to TTL and still purges dead ones", async () => {
    const clock = new ManualClock();
    const h = await harness.create({ clock });
    const { done, dead, cancelled } = await finishedTrio(h, clock);
    const lock = uniqueKeyLock("default", "k");
    await acquireUniqueLock(h.engine.store, "default", "k", "job-x", Math.floor(clock.now() / 1000) + 60);
    clock.advance((DEAD_DAYS + 1) * DAY_MS);

    const nothing = { purgedDead: 0, purgedDone: 0, purgedCancelled: 0, purgedExpired: 0, swept: 0 };
    expect(await new Cleanup(h.engine, { sweepItemsPerRun: 0 }).run()).toEqual({ ...nothing, purgedDead: 1 });
    // No sweep option at all means the same.
    expect(await new Cleanup(h.engine).run()).toEqual(nothing);
    expect(await exists(h, dead)).toBe(false);
    expect(await exists(h, done)).toBe(true);
    expect(await exists(h, cancelled)).toBe(true);
    expect(await getRaw(h, lock)).toMatchObject({ jobId: "job-x" });
  });
});
