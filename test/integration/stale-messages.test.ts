import { PurgeQueueCommand } from "@aws-sdk/client-sqs";
import { PutCommand } from "@aws-sdk/lib-dynamodb";
import { ulid } from "ulid";
import { describe, expect, it } from "vitest";
import { MAX_VISIBILITY_SECONDS, QUEUE_MESSAGE_RETENTION_SECONDS } from "../../lib/limits.ts";
import { type ReaperOptions, runReaper } from "../../lib/ops/reaper.ts";
import {
  STALE_MESSAGE_AFTER_MS,
  STALE_SWEEP_PASS_MS,
  staleSweepSlice,
} from "../../lib/ops/stale-message-sweep.ts";
import { putJob } from "../../lib/store/enqueue-ops.ts";
import type { JobItem } from "../../lib/store/job-item.ts";
import { indexKeys } from "../../lib/store/keys.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import type { SweptJob } from "../../lib/store/stale-message-ops.ts";
import { ManualClock } from "../support/clock.ts";
import { type Harness, harnessPerTest } from "../support/engine-harness.ts";
import { finishedJob, queuedItem } from "../support/jobs.ts";

/**
 * docs/architecture.md §7: a job whose item says queued while SQS has dropped its message (retention,
 * a purge) is found by the reaper's stale-message sweep and sent a fresh message, and then runs
 * exactly once. The lost message is made real by never sending it, or by purging the queue.
 */
const DAY_MS = 86_400_000;
const TICK_MS = 60_000;
/** Four ticks to a pass, so a test walks a whole pass in four runs. */
const FOUR_SLICES: ReaperOptions = { tickMs: TICK_MS, staleSweepPassMs: 4 * TICK_MS };

const harness = harnessPerTest();

async function create(clock: ManualClock): Promise<Harness> {
  return harness.create({ clock });
}

/** A queued job whose message never went out, written just over the stale age ago. */
async function staleQueuedJob() {
  const clock = new ManualClock();
  const h = await create(clock);
  const item = queuedItem(clock);
  await putJob(h.engine.store, item);
  clock.advance(STALE_MESSAGE_AFTER_MS + 1);
  return { h, item };
}

/** Runs the reaper once per tick over one whole pass; returns the summed counts. */
async function onePass(h: Harness, clock: ManualClock, options = FOUR_SLICES) {
  const total = { staleScanned: 0, staleResent: 0 };
  const slices = Math.round((options.staleSweepPassMs ?? STALE_SWEEP_PASS_MS) / (options.tickMs ?? TICK_MS));
  for (let i = 0; i < slices; i++) {
    const report = await runReaper(h.engine, options);
    total.staleScanned += report.staleScanned;
    total.staleResent += report.staleResent;
    clock.advance(options.tickMs ?? TICK_MS);
  }
  return total;
}

/** Runs every message now on the queue through the worker, as the event source would. */
async function runEverything(h: Harness): Promise<number> {
  let records = 0;
  for (;;) {
    const event = await h.receive(10, 0);
    if (event.Records.length === 0) return records;
    records += event.Records.length;
    expect(await h.worker(event)).toEqual({ batchItemFailures: [] });
  }
}

async function stored(h: Harness, id: string): Promise<SweptJob> {
  return (await getJob(h.engine.store, id)) as SweptJob;
}

describe("reaper: the stale-message sweep", () => {
  it("re-sends every job queued past the age whose message is gone, once per pass, and each runs once", async () => {
    const clock = new ManualClock();
    const h = await create(clock);
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) {
      const { job } = await h.engine.producer.enqueue({ kind: "echo", payload: { i } });
      ids.push(job.id);
    }
    // SQS dropped them (here: a purge; in production, 14 days of retention on a paused queue).
    await h.sqs.send(new PurgeQueueCommand({ QueueUrl: h.urls.url }));
    expect(await h.engine.transport.depth("default")).toMatchObject({ visible: 0 });

    // A pass that ends before they are a week old: nothing to do.
    clock.advance(STALE_MESSAGE_AFTER_MS - 10 * TICK_MS);
    expect(await onePass(h, clock)).toMatchObject({ staleScanned: 30, staleResent: 0 });

    clock.advance(6 * TICK_MS + 1);
    // The four slices of a pass split the table between them: every job is found once.
    const pass = await onePass(h, clock);
    expect(pass).toEqual({ staleScanned: 30, staleResent: 30 });
    expect(h.metrics.total("staleResent")).toBe(30);
    for (const id of ids) expect((await stored(h, id)).resentAt).toBeDefined();

    // The mark keeps the next pass off them: their fresh messages are young.
    expect(await onePass(h, clock)).toMatchObject({ staleResent: 0 });

    expect(await runEverything(h)).toBe(30);
    for (const id of ids) expect(await stored(h, id)).toMatchObject({ status: "done", attempts: 1 });
  });

  it("leaves young, scheduled and finished jobs alone, and a job it re-sent until that message is old too", async () => {
    const clock = new ManualClock();
    const h = await create(clock);
    const old = queuedItem(clock);
    await putJob(h.engine.store, old); // its message never went out
    const scheduled = queuedItem(clock, { status: "scheduled", runAt: clock.now() + 30 * DAY_MS });
    await putJob(h.engine.store, scheduled);
    const done = await finishedJob(h.engine.store, queuedItem(clock), "done", 0);
    clock.advance(STALE_MESSAGE_AFTER_MS + 1);
    const young = queuedItem(clock);
    await putJob(h.engine.store, young);

    const all = { tickMs: TICK_MS, staleSweepPassMs: TICK_MS };
    expect(await runReaper(h.engine, all)).toMatchObject({ staleScanned: 4, staleResent: 1 });
    const first = (await stored(h, old.id)).resentAt as number;
    expect(first).toBe(clock.now());
    for (const other of [scheduled, done, young])
      expect((await stored(h, other.id)).resentAt).toBeUndefined();

    clock.advance(STALE_MESSAGE_AFTER_MS);
    expect(await runReaper(h.engine, all)).toMatchObject({ staleResent: 0 });
    // Still queued a week after its fresh message (a paused queue): it gets another before SQS drops
    // that one, and so does the young job, a week old by now.
    clock.advance(1);
    expect(await runReaper(h.engine, all)).toMatchObject({ staleResent: 2 });
    expect((await stored(h, old.id)).resentAt).toBeGreaterThan(first);

    // Two fresh messages for one job: the first run finishes it, the second delivery is dropped.
    expect(await runEverything(h)).toBe(3);
    expect(await stored(h, old.id)).toMatchObject({ status: "done", attempts: 1 });
    expect(await stored(h, young.id)).toMatchObject({ status: "done", attempts: 1 });
    expect((await stored(h, done.id)).status).toBe("done");
  });

  it("counts from a promoted job's fresh message, not from its createdAt", async () => {
    const clock = new ManualClock();
    const h = await create(clock);
    // Created long ago for a runAt eight days out: the reaper promotes it with a fresh message.
    const runAt = clock.now() + STALE_MESSAGE_AFTER_MS + DAY_MS;
    const id = ulid(clock.now());
    const later = queuedItem(clock, {
      id,
      status: "scheduled",
      runAt,
      ...indexKeys("default", "scheduled", id, runAt, h.engine.store.layout.indexShards),
    });
    await putJob(h.engine.store, later);
    clock.set(later.runAt - 60_000);
    const all = { tickMs: TICK_MS, staleSweepPassMs: TICK_MS };
    expect(await runReaper(h.engine, all)).toMatchObject({ promoted: 1, staleResent: 0 });
    expect(await stored(h, later.id)).toMatchObject({ status: "queued", resentAt: clock.now() });
    // A day on it is still queued (a paused queue, say), but its message is a day old, not nine.
    clock.advance(DAY_MS);
    expect(await runReaper(h.engine, all)).toMatchObject({ staleResent: 0 });
  });

  it("takes over a running job whose owner died so long ago that its message would be back, but isn't", async () => {
    const clock = new ManualClock();
    const h = await create(clock);
    const createdAt = clock.now();
    clock.advance(STALE_MESSAGE_AFTER_MS);
    const orphan: JobItem = {
      ...queuedItem(clock, { createdAt }),
      status: "running",
      attempts: 1,
      leaseToken: "dead-owner",
      leaseUntil: clock.now(),
    };
    await h.engine.store.doc.send(new PutCommand({ TableName: h.engine.store.table, Item: orphan }));
    const all = { tickMs: TICK_MS, staleSweepPassMs: TICK_MS };

    // Within 12 h of the lease's end its message could still come back by itself: left alone.
    clock.advance(MAX_VISIBILITY_SECONDS * 1000);
    expect(await runReaper(h.engine, all)).toMatchObject({ staleResent: 0 });
    clock.advance(1);
    expect(await runReaper(h.engine, all)).toMatchObject({ staleResent: 1 });
    expect(await runEverything(h)).toBe(1);
    expect(await stored(h, orphan.id)).toMatchObject({ status: "done", attempts: 2, claimedFrom: "running" });
  });

  it("two reapers on one slice at once: at most one extra message, and the job still runs once", async () => {
    const { h, item } = await staleQueuedJob();
    const all = { tickMs: TICK_MS, staleSweepPassMs: TICK_MS };
    const [a, b] = await Promise.all([runReaper(h.engine, all), runReaper(h.engine, all)]);
    expect(a.staleResent + b.staleResent).toBeGreaterThanOrEqual(1);
    expect(a.staleResent + b.staleResent).toBeLessThanOrEqual(2);
    expect(await runEverything(h)).toBe(a.staleResent + b.staleResent);
    expect(await stored(h, item.id)).toMatchObject({ status: "done", attempts: 1 });
  });

  it("a failing sweep (say, a reaper role without dynamodb:Scan) is logged and leaves the other passes' work done", async () => {
    const clock = new ManualClock();
    const h = await create(clock);
    const { job } = await h.engine.producer.enqueue({ kind: "echo", payload: 1, delaySeconds: 1200 });
    clock.advance(1200_000);
    h.engine.store.doc.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === "ScanCommand") throw new Error("AccessDeniedException: no dynamodb:Scan");
        return next(args);
      },
      { step: "initialize", name: "denyScan" },
    );
    const report = await runReaper(h.engine, { tickMs: TICK_MS, staleSweepPassMs: TICK_MS });
    expect(report).toMatchObject({ promoted: 1, staleScanned: 0, staleResent: 0 });
    expect((await stored(h, job.id)).status).toBe("queued");
  });

  it("is off with a pass of 0", async () => {
    const { h } = await staleQueuedJob();
    expect(await runReaper(h.engine, { staleSweepPassMs: 0 })).toMatchObject({
      staleScanned: 0,
      staleResent: 0,
    });
    expect(await h.engine.transport.depth("default")).toMatchObject({ visible: 0, delayed: 0 });
  });

  it("walks every slice once per pass, in at most 4096 slices (dynalite reads some keys twice beyond)", () => {
    for (const [tickMs, passMs, slices] of [
      [60_000, STALE_SWEEP_PASS_MS, 4096], // AWS: 4096 minutes, 2.8 days
      [1_000, STALE_SWEEP_PASS_MS, 4096], // SKYFORGE_TICK_SECONDS=1
      [60_000, 4 * 60_000, 4],
      [60_000, 0.4 * 60_000, 1],
    ] as const) {
      const start = Date.parse("2026-03-01T12:34:56Z");
      const seen = Array.from({ length: slices }, (_, i) =>
        staleSweepSlice(start + i * tickMs, tickMs, passMs),
      );
      expect(new Set(seen.map((s) => s.totalSegments))).toEqual(new Set([slices]));
      expect(new Set(seen.map((s) => s.segment)).size).toBe(slices);
    }
    expect(4096 * 60_000).toBeLessThanOrEqual(STALE_SWEEP_PASS_MS);
  });

  it("re-sends by day 10 at the latest, four days before SQS's retention, with a pass to spare", () => {
    const latest = STALE_MESSAGE_AFTER_MS + STALE_SWEEP_PASS_MS;
    expect(latest).toBe(10 * DAY_MS);
    expect(QUEUE_MESSAGE_RETENTION_SECONDS * 1000 - latest).toBeGreaterThan(STALE_SWEEP_PASS_MS);
  });
});
