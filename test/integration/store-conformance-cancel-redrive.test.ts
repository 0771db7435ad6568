import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { InvalidItemState, ItemNotFound } from "../../lib/errors.ts";
import type { StoreContext } from "../../lib/store/context.ts";
import { putJob } from "../../lib/store/enqueue-ops.ts";
import { cancel, finalize } from "../../lib/store/finalize-ops.ts";
import { indexKeys } from "../../lib/store/keys.ts";
import { claim } from "../../lib/store/lease-ops.ts";
import { coolDown, getQueueState } from "../../lib/store/queue-state.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import { redrive } from "../../lib/store/redrive-ops.ts";
import { seedOf } from "../support/jobs.ts";
import {
  claimed,
  HOLD,
  jobItem,
  LEASE_MS,
  onEveryBackend,
  QUEUE,
  SHARDS,
  scheduledItem,
  storeErrorOf,
  TTL,
} from "../support/store-conformance.ts";

/**
 * Store conformance, cancel, redrive and the queue's cooldown: what an operator or the runtime does to a job from outside its run.
 * Both DynamoDB emulators, a table per test: see test/support/store-conformance.ts.
 */
onEveryBackend(({ listAll, runningJob, setup }) => {
  describe("cancel", () => {
    it("of a queued job cancels at once; a later claim fails; cancelling again is idempotent", async () => {
      const { store, clock } = await setup();
      const item = jobItem(clock);
      await putJob(store, item);
      clock.advance(10);
      const { outcome, item: cancelled } = await cancel(store, item.id, TTL);
      expect(outcome).toBe("cancelled");
      expect(cancelled).toMatchObject({ status: "cancelled", finishedAt: clock.now(), expiresAt: TTL });
      expect(await getJob(store, item.id)).toEqual(cancelled);
      expect((await claim(store, seedOf(item), "w", LEASE_MS)).claimed).toBe(false);
      expect(await cancel(store, item.id, TTL)).toEqual({ outcome: "already_cancelled", item: cancelled });
    });

    it("of a scheduled job cancels it and removes it from the scheduled index", async () => {
      const { store, clock } = await setup();
      const item = scheduledItem(clock, clock.now() + 3_600_000);
      await putJob(store, item);
      expect((await listAll(store, { queue: QUEUE, status: "scheduled" }, 10)).flat()).toHaveLength(1);
      const { item: cancelled } = await cancel(store, item.id, TTL);
      expect(cancelled.status).toBe("cancelled");
      expect(cancelled.gsi1pk).toBeUndefined();
      expect(cancelled.gsi1sk).toBeUndefined();
      expect((await listAll(store, { queue: QUEUE, status: "scheduled" }, 10)).flat()).toEqual([]);
    });

    it("of a running job only requests the cancel", async () => {
      const { store, clock } = await setup();
      const { item, running } = await runningJob(store, clock, "t");
      const { outcome, item: requested } = await cancel(store, item.id, TTL);
      expect(outcome).toBe("requested");
      expect(requested).toEqual({ ...running, cancelRequested: true });
      expect(await getJob(store, item.id)).toEqual(requested);
    });

    it("of a missing job is not_found", async () => {
      const { store } = await setup();
      const err = await storeErrorOf(cancel(store, "nope", TTL));
      expect(err).toBeInstanceOf(ItemNotFound);
      expect(await getJob(store, "nope")).toBeUndefined();
    });

    it("arriving late on a done job is a conflict and the job stays done", async () => {
      const { store, clock } = await setup();
      const { item } = await runningJob(store, clock, "t");
      await finalize(store, item, "t", { outcome: "done", result: { json: "1" }, expiresAt: TTL });
      const done = await getJob(store, item.id);
      const err = await storeErrorOf(cancel(store, item.id, TTL));
      expect(err).toBeInstanceOf(InvalidItemState);
      // The error carries the job as it is, so the caller can answer without a second read.
      expect((err as InvalidItemState).current).toEqual(done);
      expect(await getJob(store, item.id)).toEqual(done);
    });

    it("of a running job whose run ends just after the cancel's write lost: cancelled, not a conflict", async () => {
      const { store, clock } = await setup();
      const { item } = await runningJob(store, clock, "t");
      // The run ends (a retry: back to queued) between the refused write and the cancel's look at
      // the job, as a durable job's suspend or a retry can while a user cancels it.
      let ended = false;
      const racing: StoreContext = {
        ...store,
        doc: afterFirstRefusal(store.doc, async () => {
          ended = true;
          await finalize(store, item, "t", { outcome: "retry", runAt: clock.now(), error: "e" });
        }),
      };
      const { outcome, item: cancelled } = await cancel(racing, item.id, TTL);
      expect(ended).toBe(true);
      expect([outcome, cancelled.status]).toEqual(["cancelled", "cancelled"]);
      expect(await getJob(store, item.id)).toEqual(cancelled);
    });

    it("of a dead job is a conflict", async () => {
      const { store, clock } = await setup();
      const { item } = await runningJob(store, clock, "t");
      await finalize(store, item, "t", { outcome: "dead", error: "x", expiresAt: TTL });
      expect(await storeErrorOf(cancel(store, item.id, TTL))).toBeInstanceOf(InvalidItemState);
      expect((await getJob(store, item.id))?.status).toBe("dead");
    });
  });

  // ── redrive ──────────────────────────────────────────────────────────────────────────────────────

  describe("redrive", () => {
    it("of a dead job: scheduled now, attempts 0, out of the dead index and into the scheduled one", async () => {
      const { store, clock } = await setup();
      const { item } = await runningJob(store, clock, "t");
      await finalize(store, item, "t", { outcome: "dead", error: "fatal", expiresAt: TTL });
      clock.advance(60_000);
      const redriven = await redrive(store, item, HOLD);
      expect(redriven).toMatchObject({
        status: "scheduled",
        attempts: 0,
        runAt: clock.now(),
        promotingUntil: HOLD,
        ...indexKeys(QUEUE, "scheduled", item.id, clock.now(), SHARDS),
      });
      for (const gone of [
        "lastError",
        "finishedAt",
        "expiresAt",
        "result",
        "startedAt",
        "cancelRequested",
      ] as const) {
        expect(redriven[gone]).toBeUndefined();
      }
      expect(await getJob(store, item.id)).toEqual(redriven);
      expect(
        (await listAll(store, { queue: QUEUE, status: "scheduled" }, 10)).flat().map((j) => j.id),
      ).toEqual([item.id]);
      expect((await listAll(store, { queue: QUEUE, status: "dead" }, 10)).flat()).toEqual([]);
      // It runs again from attempt 1.
      expect(claimed(await claim(store, seedOf(item), "t2", LEASE_MS))).toMatchObject({
        attempts: 1,
        claimedFrom: "scheduled",
      });
    });

    it("of a cancelled job works too", async () => {
      const { store, clock } = await setup();
      const item = jobItem(clock);
      await putJob(store, item);
      await cancel(store, item.id, TTL);
      const redriven = await redrive(store, item, HOLD);
      expect(redriven).toMatchObject({ status: "scheduled", attempts: 0 });
      expect(redriven.cancelRequested).toBeUndefined();
    });

    it("of a done, running or queued job is a conflict; of a missing one not_found", async () => {
      const { store, clock } = await setup();
      const { item: done } = await runningJob(store, clock, "t");
      await finalize(store, done, "t", { outcome: "done", result: { json: "1" }, expiresAt: TTL });
      const doneBefore = await getJob(store, done.id);
      expect(await storeErrorOf(redrive(store, done, HOLD))).toBeInstanceOf(InvalidItemState);
      expect(await getJob(store, done.id)).toEqual(doneBefore);

      const { item: running } = await runningJob(store, clock, "r");
      expect(await storeErrorOf(redrive(store, running, HOLD))).toBeInstanceOf(InvalidItemState);
      const queued = jobItem(clock);
      await putJob(store, queued);
      expect(await storeErrorOf(redrive(store, queued, HOLD))).toBeInstanceOf(InvalidItemState);

      expect(await storeErrorOf(redrive(store, { id: "missing", queue: QUEUE }, HOLD))).toBeInstanceOf(
        ItemNotFound,
      );
    });
  });

  // ── queue state ──────────────────────────────────────────────────────────────────────────────────

  describe("coolDown", () => {
    it("only ever extends the cooldown", async () => {
      const { store, clock } = await setup();
      const t0 = clock.now();
      expect(await getQueueState(store, QUEUE)).toEqual({});
      expect(await coolDown(store, QUEUE, t0 + 10_000)).toBe(true);
      expect(await coolDown(store, QUEUE, t0 + 5_000)).toBe(false);
      expect(await coolDown(store, QUEUE, t0 + 10_000)).toBe(false);
      expect((await getQueueState(store, QUEUE)).cooldownUntil).toBe(t0 + 10_000);
      expect(await coolDown(store, QUEUE, t0 + 20_000)).toBe(true);
      expect((await getQueueState(store, QUEUE)).cooldownUntil).toBe(t0 + 20_000);
      // Queues are independent.
      expect(await getQueueState(store, "other")).toEqual({});
    });
  });

  // ── listing ──────────────────────────────────────────────────────────────────────────────────────
});

/** The document client, running `between` once, after the first write a condition refused and before the caller sees it. */
function afterFirstRefusal(
  doc: DynamoDBDocumentClient,
  between: () => Promise<void>,
): DynamoDBDocumentClient {
  let done = false;
  const send = async (...args: Parameters<DynamoDBDocumentClient["send"]>) => {
    try {
      return await doc.send(...args);
    } catch (err) {
      if (!done && err instanceof ConditionalCheckFailedException) {
        done = true;
        await between();
      }
      throw err;
    }
  };
  return new Proxy(doc, { get: (target, name) => (name === "send" ? send : Reflect.get(target, name)) });
}
