import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { ulid } from "ulid";
import { describe, expect, it } from "vitest";
import { InvalidItemState } from "../../lib/errors.ts";
import { HISTORY_KEEP } from "../../lib/store/attempt-history.ts";
import { cancel, finalize } from "../../lib/store/finalize-ops.ts";
import { type JobItem, toJobView } from "../../lib/store/job-item.ts";
import { claim } from "../../lib/store/lease-ops.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import { redrive } from "../../lib/store/redrive-ops.ts";
import { seedOf } from "../support/jobs.ts";
import {
  approximateItemBytes,
  claimed,
  HOLD,
  LEASE_MS,
  onEveryBackend,
  payloadOfBytes,
  QUEUE,
  storeErrorOf,
  TTL,
} from "../support/store-conformance.ts";

/**
 * Store conformance, the attempt history and paused jobs (docs/architecture.md §4, §21): what the
 * claim, the takeover and the finalize record of each run, and how a paused job leaves.
 * Both DynamoDB emulators, a table per test: see test/support/store-conformance.ts.
 */
onEveryBackend(({ capacity, listAll, runningJob, setup }) => {
  describe("attempt history", () => {
    it("a first-attempt success adds no list; the view shows the one attempt from the item's fields", async () => {
      const { store, clock } = await setup();
      const { item } = await runningJob(store, clock, "t");
      clock.advance(1500);
      const running = (await getJob(store, item.id)) as JobItem;
      expect(toJobView(running).history).toEqual([
        { attempt: 1, startedAt: new Date(running.startedAt as number).toISOString(), outcome: "running" },
      ]);
      await finalize(store, running, "t", { outcome: "done", result: { json: "1" }, expiresAt: TTL });
      const done = (await getJob(store, item.id)) as JobItem;
      expect(done.history).toBeUndefined();
      expect(toJobView(done).history).toEqual([
        {
          attempt: 1,
          startedAt: new Date(running.startedAt as number).toISOString(),
          endedAt: new Date(clock.now()).toISOString(),
          outcome: "done",
        },
      ]);
    });

    it("a retry, a throttle (attempt given back) and a success: three entries, the throttled one named", async () => {
      const { store, clock } = await setup();
      const item = (await runningJob(store, clock, "t")).running;
      const started1 = item.startedAt as number;
      clock.advance(1000);
      await finalize(store, item, "t", { outcome: "retry", runAt: clock.now(), error: "boom" });
      const second = claimed(await claim(store, seedOf(item), "t2", LEASE_MS, { runner: "local:42" }));
      expect(second).toMatchObject({ attempts: 2, runner: "local:42" });
      clock.advance(500);
      await finalize(store, second, "t2", { outcome: "throttled", runAt: clock.now(), reason: "slow down" });
      const third = claimed(await claim(store, seedOf(item), "t3", LEASE_MS, { runner: "local:43" }));
      // The throttle gave its attempt back: the third run counts as attempt 2 again.
      expect(third.attempts).toBe(2);
      clock.advance(200);
      await finalize(store, third, "t3", { outcome: "done", result: { json: "1" }, expiresAt: TTL });
      const done = (await getJob(store, item.id)) as JobItem;
      const view = toJobView(done).history ?? [];
      expect(view.map((a) => [a.attempt, a.outcome, a.error, a.runner])).toEqual([
        [1, "retry", "boom", undefined],
        [2, "throttled", "slow down", "local:42"],
        [2, "done", undefined, "local:43"],
      ]);
      expect(view[0]?.startedAt).toBe(new Date(started1).toISOString());
      // Keyed by start: two entries share attempt 2 and differ in their start.
      expect(new Set(view.map((a) => a.startedAt)).size).toBe(3);
    });

    it("a takeover records the lapsed run: lease lapsed after N s without an end, its runner", async () => {
      const { store, clock } = await setup();
      const item = (await runningJob(store, clock, "t")).running;
      const start = item.startedAt as number;
      // The first claim had no runner; a heartbeat-less death: the lease ends 30 s after the start.
      clock.advance(LEASE_MS + 1);
      const took = claimed(await claim(store, seedOf(item), "t2", LEASE_MS, { runner: "local:7" }));
      expect(took).toMatchObject({
        claimedFrom: "running",
        attempts: 2,
        runner: "local:7",
        leaseToken: "t2",
      });
      expect(took.history).toEqual([
        {
          a: 1,
          s: start,
          e: start + LEASE_MS,
          o: "lapsed",
          x: "lease lapsed after 30 s without an end (the worker stopped: crash, out of memory or a frozen process)",
        },
      ]);
      expect(await getJob(store, item.id)).toEqual(took);
      expect(toJobView(took).history?.map((a) => a.outcome)).toEqual(["lapsed", "running"]);
    });

    it("a run past its platform's limit (a Lambda timeout) is named a timeout", async () => {
      const { store, clock } = await setup();
      const item = (await runningJob(store, clock, "t")).running;
      await store.doc.send(
        // A Lambda worker whose invocation ends 20 s after its claim (its run stamp), killed there.
        new UpdateCommand({
          TableName: store.table,
          Key: { pk: item.pk, sk: item.sk },
          UpdateExpression: "SET runDeadline = :d, runner = :r",
          ExpressionAttributeValues: { ":d": (item.startedAt as number) + 20_000, ":r": "lambda:w/req-1" },
        }),
      );
      clock.advance(LEASE_MS + 1);
      const took = claimed(await claim(store, seedOf(item), "t2", LEASE_MS));
      expect(took.history?.[0]).toMatchObject({ o: "lapsed", r: "lambda:w/req-1" });
      expect(took.history?.[0]?.x).toBe(
        "timeout: lease lapsed after 30 s without an end (the worker reached its time limit, 20 s after the start)",
      );
      // The new run has no runner of its own: the old one's is gone from the item.
      expect(took.runner).toBeUndefined();
      expect(took.runDeadline).toBeUndefined();
    });

    it("a takeover that loses to the old owner's late finalize claims nothing and writes nothing", async () => {
      const { store, clock } = await setup();
      const item = (await runningJob(store, clock, "t")).running;
      clock.advance(LEASE_MS + 1);
      // The old owner finishes after its lease ran out but before anyone took over: its fence still holds.
      await finalize(store, item, "t", { outcome: "done", result: { json: "1" }, expiresAt: TTL });
      const done = await getJob(store, item.id);
      expect((await claim(store, seedOf(item), "t2", LEASE_MS)).claimed).toBe(false);
      expect(await getJob(store, item.id)).toEqual(done);
    });

    it(`keeps the last ${HISTORY_KEEP} records and counts the dropped ones`, async () => {
      const { store, clock } = await setup();
      let run = (await runningJob(store, clock, "t0", { maxAttempts: 20 })).running;
      for (let n = 1; n <= HISTORY_KEEP + 3; n++) {
        clock.advance(100);
        await finalize(store, run, `t${n - 1}`, { outcome: "retry", runAt: clock.now(), error: `e${n}` });
        run = claimed(await claim(store, seedOf(run), `t${n}`, LEASE_MS));
      }
      expect(run.history).toHaveLength(HISTORY_KEEP);
      expect(run.historyDropped).toBe(3);
      expect(run.history?.[0]?.x).toBe("e4");
      expect(toJobView(run)).toMatchObject({ historyDropped: 3 });
    });

    it("a job that failed twice and then succeeded stays under 1 KB, and the finalize stays one write", async () => {
      const { store, clock, table } = await setup();
      const payload = payloadOfBytes(256);
      let run = (await runningJob(store, clock, "a", { payload })).running;
      const runner = "lambda:skyforge-prod-default-worker/8f3e2a9c-4b1d-4e0f-9a8b-2c3d4e5f6a7b";
      for (const [token, next] of [
        ["a", "b"],
        ["b", "c"],
      ] as const) {
        await finalize(store, run, token, {
          outcome: "retry",
          runAt: clock.now(),
          error: "TypeError: Cannot read properties of undefined (reading 'id')",
        });
        run = claimed(
          await claim(store, seedOf(run), next, LEASE_MS, { runner, deadline: clock.now() + 900_000 }),
        );
      }
      const before = capacity.length;
      await finalize(store, run, "c", { outcome: "done", result: { json: '{"ok":true}' }, expiresAt: TTL });
      const done = (await getJob(store, run.id)) as JobItem;
      expect(done.history).toHaveLength(2);
      expect(approximateItemBytes(done as unknown as Record<string, unknown>)).toBeLessThan(1024);
      const writes = capacity
        .slice(before)
        .filter((c) => c.table === table && c.command === "UpdateItemCommand");
      expect(writes).toHaveLength(1);
      expect(writes[0]?.units).toBe(1);
    });
  });

  describe("paused", () => {
    async function pausedJob(store: Parameters<typeof finalize>[0], clock: Parameters<typeof runningJob>[1]) {
      const { running } = await runningJob(store, clock, "t", { id: ulid() });
      const r = await finalize(store, running, "t", { outcome: "paused", error: "boom" });
      if (!r.finalized) throw new Error("expected the pause to land");
      return r.item;
    }

    it("a pause keeps the job (no TTL, no finishedAt), with its error, in the paused index", async () => {
      const { store, clock } = await setup();
      const paused = await pausedJob(store, clock);
      expect(paused).toMatchObject({ status: "paused", lastError: "boom", attempts: 1 });
      expect(paused.expiresAt).toBeUndefined();
      expect(paused.finishedAt).toBeUndefined();
      expect(paused.leaseToken).toBeUndefined();
      expect((await listAll(store, { queue: QUEUE, status: "paused" }, 10)).flat().map((j) => j.id)).toEqual([
        paused.id,
      ]);
      expect(toJobView(paused).history?.map((a) => [a.outcome, a.error])).toEqual([["paused", "boom"]]);
    });

    it("a resume takes it to scheduled with a fresh set of attempts and the new payload, out of the paused index", async () => {
      const { store, clock } = await setup();
      const paused = await pausedJob(store, clock);
      const resumed = await redrive(store, paused, HOLD, { payload: { payload: '{"n":2}' } });
      expect(resumed).toMatchObject({
        status: "scheduled",
        attempts: 0,
        payload: '{"n":2}',
        promotingUntil: HOLD,
      });
      expect(resumed.lastError).toBeUndefined();
      expect(resumed.history).toEqual(paused.history);
      expect((await listAll(store, { queue: QUEUE, status: "paused" }, 10)).flat()).toEqual([]);
      // A resume without a payload keeps the job's own.
      const again = await pausedJob(store, clock);
      expect(await redrive(store, again, HOLD, {})).toMatchObject({
        status: "scheduled",
        payload: again.payload,
      });
    });

    it("a resume of a job that isn't paused is a conflict, and writes nothing; a retry of a paused one too", async () => {
      const { store, clock } = await setup();
      const { running } = await runningJob(store, clock, "t");
      const error = await storeErrorOf(redrive(store, running, HOLD, { payload: { payload: "1" } }));
      expect(error).toBeInstanceOf(InvalidItemState);
      expect(error.message).toMatch(/only paused jobs can be resumed/);
      expect(await getJob(store, running.id)).toEqual(running);
      const paused = await pausedJob(store, clock);
      expect(await storeErrorOf(redrive(store, paused, HOLD))).toBeInstanceOf(InvalidItemState);
    });

    it("a cancel ends a paused job cancelled, out of the paused index", async () => {
      const { store, clock } = await setup();
      const paused = await pausedJob(store, clock);
      const { outcome, item } = await cancel(store, paused.id, TTL);
      expect(outcome).toBe("cancelled");
      expect(item).toMatchObject({ status: "cancelled", finishedAt: clock.now(), expiresAt: TTL });
      expect(item.gsi1pk).toBeUndefined();
      expect((await listAll(store, { queue: QUEUE, status: "paused" }, 10)).flat()).toEqual([]);
    });
  });
});
