import { SendMessageCommand } from "@aws-sdk/client-sqs";
import { describe, expect, it, vi } from "vitest";
import type { QueueDeclaration } from "../../lib/declarations/queue-declaration.ts";
import { PROMOTION_HOLD_MS, promotionHoldUntil } from "../../lib/ops/promote.ts";
import { DEAD_LETTER_REASON, PROMOTION_HORIZON_MS, runReaper } from "../../lib/ops/reaper.ts";
import { retentionExpiry } from "../../lib/retention.ts";
import { putJob } from "../../lib/store/enqueue-ops.ts";
import type { JobItem } from "../../lib/store/job-item.ts";
import { getJob, listJobs } from "../../lib/store/read-ops.ts";
import { beginPromotion, deadLetter } from "../../lib/store/reaper-ops.ts";
import { redrive } from "../../lib/store/redrive-ops.ts";
import { messageFromItem } from "../../lib/transport/message-from-item.ts";
import { ManualClock } from "../support/clock.ts";
import { type Harness, harnessPerTest } from "../support/engine-harness.ts";
import { finishedJob, queuedItem, runningJob, seedOf } from "../support/jobs.ts";

const DAY_MS = 86_400_000;

const harness = harnessPerTest();

async function create(clock: ManualClock, queue: Partial<QueueDeclaration> = {}): Promise<Harness> {
  return harness.create({ clock, queue });
}

/** Everything visible on the main queue right now (no long poll: nothing here is waited for). */
async function drainVisible(h: Harness) {
  const records = [];
  for (;;) {
    const event = await h.receive(10, 0);
    if (event.Records.length === 0) return records;
    records.push(...event.Records);
  }
}

async function enqueueScheduled(h: Harness, delaySeconds: number): Promise<JobItem> {
  const { job } = await h.engine.producer.enqueue({
    kind: "echo",
    payload: { hello: "later" },
    delaySeconds,
  });
  expect(job.status).toBe("scheduled");
  return (await getJob(h.engine.store, job.id)) as JobItem;
}

const noReports = {
  promoted: 0,
  promotionsSkipped: 0,
  deadLettered: 0,
  deadLetterDuplicates: 0,
  deadLettersDeferred: 0,
  deadLettersUnrecognized: 0,
  eventSourcesRepaired: 0,
  // The stale-message sweep reads whatever slice the clock picks; nothing here is queued for a week.
  staleScanned: expect.any(Number),
  staleResent: 0,
  groupsChecked: 0,
  groupsExpired: 0,
  groupRepairs: 0,
  flowKeysChecked: 0,
  flowJobsSent: 0,
};

/** Receives the one message waiting and has the worker run it, without a failure. */
async function workOneMessage(h: Harness): Promise<void> {
  const event = await h.receive(10, 0);
  expect(event.Records).toHaveLength(1);
  expect(await h.worker(event)).toEqual({ batchItemFailures: [] });
}

/** The default queue's depth with nothing in it, nor in its DLQ. */
const EMPTY_QUEUE = { visible: 0, inFlight: 0, delayed: 0, dlq: 0 };

describe("reaper: promotion of scheduled jobs", () => {
  it("promotes a far-off job only once it falls within SQS's 15-minute delay horizon", async () => {
    const clock = new ManualClock();
    const h = await create(clock);
    const job = await enqueueScheduled(h, 1200);
    expect(job.gsi1pk).toBeDefined();
    expect(await h.engine.transport.depth("default")).toEqual(EMPTY_QUEUE);

    expect(await runReaper(h.engine)).toEqual(noReports);
    clock.advance(1200_000 - PROMOTION_HORIZON_MS - 1000); // due in 901 s: still beyond the horizon
    expect(await runReaper(h.engine)).toEqual(noReports);
    expect((await getJob(h.engine.store, job.id))?.status).toBe("scheduled");
    expect(await h.engine.transport.depth("default")).toMatchObject({ visible: 0, delayed: 0 });

    clock.advance(2000); // due in 899 s
    expect(await runReaper(h.engine)).toEqual({ ...noReports, promoted: 1 });
    const queued = await getJob(h.engine.store, job.id);
    expect(queued).toMatchObject({ status: "queued", runAt: job.runAt });
    expect(queued?.gsi1pk).toBeUndefined();
    expect(queued?.promotingUntil).toBeUndefined();
    // One message, held back by SQS for the ~15 minutes left until its runAt.
    expect(await h.engine.transport.depth("default")).toEqual({ ...EMPTY_QUEUE, delayed: 1 });
    expect(await runReaper(h.engine)).toEqual(noReports);
    expect(h.metrics.total("promoted")).toBe(1);
  });

  it("promotes exactly once when reapers race, and a later run finds nothing to do", async () => {
    const clock = new ManualClock();
    const h = await create(clock);
    const jobs = await Promise.all([enqueueScheduled(h, 1200), enqueueScheduled(h, 1500)]);
    clock.advance(1500_000); // both due now: their messages go out without delay

    const racing = await Promise.all([runReaper(h.engine), runReaper(h.engine), runReaper(h.engine)]);
    const later = await runReaper(h.engine);
    const all = [...racing, later];
    expect(all.reduce((n, r) => n + r.promoted, 0)).toBe(2);
    expect(later).toEqual(noReports);
    // A loser either skipped a held job or never saw it in the index again: never a second send.
    for (const r of racing) expect(r.promoted + r.promotionsSkipped).toBeLessThanOrEqual(2);

    const records = await drainVisible(h);
    expect(records.map((r) => JSON.parse(r.body).id).sort()).toEqual(jobs.map((j) => j.id).sort());
    for (const j of jobs) expect((await getJob(h.engine.store, j.id))?.status).toBe("queued");
    expect(h.metrics.total("promoted")).toBe(2);
  });

  it("a promotion that died after taking the job is retried only once its hold lapses", async () => {
    const clock = new ManualClock();
    const h = await create(clock);
    const job = await enqueueScheduled(h, 1200);
    clock.advance(1200_000);
    // A reaper takes the job and dies before sending.
    const held = await beginPromotion(
      h.engine.store,
      job.id,
      job.runAt,
      promotionHoldUntil(job.runAt, clock.now()),
    );
    expect(held?.promotingUntil).toBe(clock.now() + PROMOTION_HOLD_MS);
    // Its hold also stops a second beginPromotion outright.
    expect(await beginPromotion(h.engine.store, job.id, job.runAt, clock.now() + PROMOTION_HOLD_MS)).toBe(
      undefined,
    );

    expect(await runReaper(h.engine)).toEqual({ ...noReports, promotionsSkipped: 1 });
    clock.advance(PROMOTION_HOLD_MS); // exactly at the hold: still held
    expect(await runReaper(h.engine)).toEqual({ ...noReports, promotionsSkipped: 1 });
    expect(await h.engine.transport.depth("default")).toMatchObject({ visible: 0, delayed: 0 });

    clock.advance(1);
    expect(await runReaper(h.engine)).toEqual({ ...noReports, promoted: 1 });
    expect(await runReaper(h.engine)).toEqual(noReports);
    const records = await drainVisible(h);
    expect(records).toHaveLength(1);
    expect(JSON.parse(records[0]?.body as string)).toMatchObject({ id: job.id, runAt: job.runAt });
    expect((await getJob(h.engine.store, job.id))?.status).toBe("queued");
  });

  it("the promoted job runs to done through the worker", async () => {
    const clock = new ManualClock();
    const h = await create(clock);
    const job = await enqueueScheduled(h, 1200);
    clock.advance(1200_000);
    expect((await runReaper(h.engine)).promoted).toBe(1);
    await workOneMessage(h);
    expect(await getJob(h.engine.store, job.id)).toMatchObject({
      status: "done",
      attempts: 1,
      claimedFrom: "queued",
      result: JSON.stringify({ hello: "later" }),
    });
    expect(h.metrics.total("succeeded")).toBe(1);
  });

  it("a redrive that died before sending is promoted by the reaper after its hold, and then runs", async () => {
    const clock = new ManualClock();
    const h = await create(clock);
    const dead = await finishedJob(
      h.engine.store,
      queuedItem(clock, { payload: JSON.stringify({ again: true }) }),
      "dead",
      retentionExpiry(clock.now(), 30),
    );
    expect(dead.status).toBe("dead");
    clock.advance(60_000);
    const now = clock.now();
    // The operator's redrive moves the job, then its process dies before sendPromoted.
    const moved = await redrive(h.engine.store, dead, promotionHoldUntil(now, now));
    expect(moved).toMatchObject({ status: "scheduled", runAt: now, attempts: 0 });

    expect(await runReaper(h.engine)).toEqual({ ...noReports, promotionsSkipped: 1 });
    expect(await h.engine.transport.depth("default")).toMatchObject({ visible: 0, delayed: 0 });
    clock.advance(PROMOTION_HOLD_MS + 1);
    expect(await runReaper(h.engine)).toEqual({ ...noReports, promoted: 1 });
    expect(await runReaper(h.engine)).toEqual(noReports);

    await workOneMessage(h);
    expect(await getJob(h.engine.store, dead.id)).toMatchObject({
      status: "done",
      attempts: 1,
      result: JSON.stringify({ again: true }),
    });
    expect((await drainVisible(h)).length).toBe(0);
  });
});

describe("reaper: dead-letter queue drain", () => {
  it("marks dead what SQS gave up on, and leaves finished, leased and foreign messages alone", async () => {
    const clock = new ManualClock();
    const h = await create(clock);
    const { store } = h.engine;
    const toDlq = (body: string) =>
      h.sqs.send(new SendMessageCommand({ QueueUrl: h.urls.dlqUrl, MessageBody: body }));
    const bodyOf = (item: JobItem) => JSON.stringify(messageFromItem(item, item.payload ?? "null"));

    // (a) the enqueue died before its item write: only the message knows the job.
    const ghost = queuedItem(clock, { id: "ghost-job" });
    // (b) a queued job whose deliveries all failed.
    const queued = queuedItem(clock);
    await putJob(store, queued);
    // (c) a job that finished anyway (a late duplicate of its message).
    const done = await finishedJob(store, queuedItem(clock), "done", retentionExpiry(clock.now(), 7));
    // (d) a job a worker is running right now, under a live lease.
    const running = (await runningJob(store, queuedItem(clock), 60_000)).item;
    // (f) a job waiting out a retry's backoff: its real message is on its way, this copy is stale.
    const retrying = queuedItem(clock, { runAt: clock.now() + 600_000 });
    await putJob(store, retrying);
    for (const item of [ghost, queued, done, running, retrying]) await toDlq(bodyOf(item));
    // (e) something that is not a skyforge job.
    await toDlq("hello from another system");
    expect((await h.engine.transport.depth("default")).dlq).toBe(6);
    // Its subscribers hear of each end (docs/architecture.md §25), and of nothing the drain left alone.
    const ended = vi.spyOn(h.engine.realtime, "ended");

    const report = await runReaper(h.engine);
    expect(ended.mock.calls.map(([item]) => item.id).sort()).toEqual([ghost.id, queued.id].sort());
    expect(report).toEqual({
      ...noReports,
      deadLettered: 2,
      deadLetterDuplicates: 2,
      deadLettersDeferred: 1,
      deadLettersUnrecognized: 1,
    });

    const deadExpiry = retentionExpiry(clock.now(), 30);
    for (const id of [ghost.id, queued.id]) {
      expect(await getJob(store, id)).toMatchObject({
        status: "dead",
        lastError: DEAD_LETTER_REASON,
        finishedAt: clock.now(),
        expiresAt: deadExpiry,
        attempts: 0,
      });
    }
    // The ghost was built from its message.
    expect(await getJob(store, ghost.id)).toMatchObject({ kind: "echo", payload: ghost.payload });
    const listed = await listJobs(store, { queue: "default", status: "dead", limit: 10 });
    expect(listed.items.map((i) => i.id).sort()).toEqual([ghost.id, queued.id].sort());

    expect(await getJob(store, done.id)).toMatchObject({ status: "done", result: done.result });
    expect(await getJob(store, retrying.id)).toMatchObject({ status: "queued", runAt: retrying.runAt });
    expect(await getJob(store, running.id)).toMatchObject({
      status: "running",
      leaseToken: running.leaseToken,
      leaseUntil: running.leaseUntil,
    });

    // Deleted: (a), (b), (c), (f). Left for a later run or an operator: (d), (e).
    expect(await h.engine.transport.depth("default")).toEqual({ ...EMPTY_QUEUE, dlq: 2 });
    expect(h.metrics.total("deadLettered")).toBe(2);
    expect(h.metrics.total("dead")).toBe(2);
    expect(h.metrics.total("promoted")).toBe(0);
  });

  it("the store marks a leased job dead once its lease has expired", async () => {
    // What the next drain does with message (d) above, once the owner stopped heartbeating.
    const clock = new ManualClock();
    const h = await create(clock);
    const running = (await runningJob(h.engine.store, queuedItem(clock), 60_000)).item;
    const seed = seedOf(running);
    expect((await deadLetter(h.engine.store, seed, DEAD_LETTER_REASON, 0)).marked).toBe(false);
    clock.advance(60_001);
    const result = await deadLetter(h.engine.store, seed, DEAD_LETTER_REASON, 0);
    expect(result.marked).toBe(true);
    const item = await getJob(h.engine.store, running.id);
    expect(item).toMatchObject({ status: "dead", lastError: DEAD_LETTER_REASON, attempts: 1 });
    expect(item?.leaseToken).toBeUndefined();
  });

  it("a job whose message SQS itself redrove to the DLQ becomes dead", async () => {
    const clock = new ManualClock();
    const h = await create(clock, { maxReceiveCount: 2 });
    const { job } = await h.engine.producer.enqueue({ kind: "echo", payload: { poison: true } });
    // Two receives that never delete (crashed workers), each made visible again at once.
    for (let i = 0; i < 2; i++) {
      const event = await h.receive(1, 0);
      expect(event.Records).toHaveLength(1);
      await h.engine.transport.changeVisibility("default", event.Records[0]?.receiptHandle as string, 0);
    }
    // The third receive exceeds maxReceiveCount: SQS moves the message to the DLQ instead.
    expect((await h.receive(1, 0)).Records).toHaveLength(0);
    expect(await h.engine.transport.depth("default")).toEqual({ ...EMPTY_QUEUE, dlq: 1 });

    clock.advance(DAY_MS);
    expect(await runReaper(h.engine)).toEqual({ ...noReports, deadLettered: 1 });
    expect(await getJob(h.engine.store, job.id)).toMatchObject({
      status: "dead",
      lastError: DEAD_LETTER_REASON,
      attempts: 0,
      finishedAt: clock.now(),
    });
    expect((await h.engine.transport.depth("default")).dlq).toBe(0);
    expect(h.metrics.total("deadLettered")).toBe(1);
  });
});
