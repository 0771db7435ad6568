import { describe, expect, it } from "vitest";
import { loadPayload } from "../../lib/claims/job-bodies.ts";
import { putJob, putPayload } from "../../lib/store/enqueue-ops.ts";
import { cancel, finalize } from "../../lib/store/finalize-ops.ts";
import { jobKey } from "../../lib/store/keys.ts";
import { type ClaimResult, claim, heartbeat } from "../../lib/store/lease-ops.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import { STORED_FORMATS } from "../../lib/store/stored-formats.ts";
import { unreachableClaimStore } from "../support/claims.ts";
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
 * Store conformance, claim and heartbeat: how a consumer takes a job and keeps its lease.
 * Both DynamoDB emulators, a table per test: see test/support/store-conformance.ts.
 */
onEveryBackend(({ listAll, runningJob, setup }) => {
  describe("claim", () => {
    it("takes a queued, due job: running, attempts 1, fresh lease, claimedFrom queued", async () => {
      const { store, clock } = await setup();
      const item = jobItem(clock);
      await putJob(store, item);
      clock.advance(5);
      const running = claimed(await claim(store, seedOf(item), "tok-1", LEASE_MS));
      expect(running).toMatchObject({
        id: item.id,
        status: "running",
        attempts: 1,
        leaseToken: "tok-1",
        leaseUntil: clock.now() + LEASE_MS,
        startedAt: clock.now(),
        claimedFrom: "queued",
        payload: item.payload,
        createdAt: item.createdAt,
        runAt: item.runAt,
      });
      expect(await getJob(store, item.id)).toEqual(running);
    });

    it("refuses a job that is not due yet, then takes it once runAt comes", async () => {
      const { store, clock } = await setup();
      const item = jobItem(clock, { runAt: clock.now() + 10_000 });
      await putJob(store, item);

      const early = await claim(store, seedOf(item), "t", LEASE_MS);
      expect(early.claimed).toBe(false);
      if (early.claimed) return;
      expect(early.current).toEqual({ ...item, fv: STORED_FORMATS.job }); // putJob writes the format version

      clock.advance(10_000); // runAt <= now
      const due = claimed(await claim(store, seedOf(item), "t", LEASE_MS));
      expect(due).toMatchObject({ status: "running", attempts: 1, claimedFrom: "queued" });
    });

    it("builds a missing job from its seed (the message is the outbox): claimedFrom missing", async () => {
      const { store, clock } = await setup();
      const item = jobItem(clock, {
        uniqueKey: "u-1",
        timeoutSeconds: 60,
        maxAttempts: 5,
        priority: "critical",
      });
      expect(await getJob(store, item.id)).toBeUndefined();

      const running = claimed(await claim(store, seedOf(item), "tok", LEASE_MS));
      expect(running).toMatchObject({
        ...jobKey(item.id),
        id: item.id,
        kind: item.kind,
        queue: item.queue,
        maxAttempts: 5,
        priority: "critical",
        createdAt: item.createdAt,
        runAt: item.runAt,
        payload: item.payload,
        uniqueKey: "u-1",
        timeoutSeconds: 60,
        status: "running",
        attempts: 1,
        leaseToken: "tok",
        claimedFrom: "missing",
      });
      expect(await getJob(store, item.id)).toEqual(running);
    });

    it("builds a missing large-payload job with payloadRef instead of an inline payload", async () => {
      const { store, clock } = await setup();
      const item = jobItem(clock);
      const { payload: _inline, ...seed } = seedOf(item);
      const running = claimed(await claim(store, { ...seed, payloadRef: true }, "tok", LEASE_MS));
      expect(running.payloadRef).toBe(true);
      expect(running.payload).toBeUndefined();
      const big = JSON.stringify({ big: "y".repeat(1000) });
      await putPayload(store, item.id, big, TTL);
      expect(await loadPayload(store, unreachableClaimStore(), running)).toBe(big);
    });

    it("takes a scheduled job that is due and removes it from the scheduled index", async () => {
      const { store, clock } = await setup();
      const item = scheduledItem(clock, clock.now() + 60_000);
      await putJob(store, item);
      expect((await claim(store, seedOf(item), "t", LEASE_MS)).claimed).toBe(false);
      clock.advance(60_000);
      const running = claimed(await claim(store, seedOf(item), "t", LEASE_MS));
      expect(running).toMatchObject({ status: "running", claimedFrom: "scheduled", attempts: 1 });
      expect(running.gsi1pk).toBeUndefined();
      expect(running.gsi1sk).toBeUndefined();
      const listed = await listAll(store, { queue: QUEUE, status: "scheduled" }, 10);
      expect(listed.flat()).toEqual([]);
    });

    it("of concurrent claims of one queued job, exactly one wins", async () => {
      const { store, clock } = await setup();
      const item = jobItem(clock);
      await putJob(store, item);
      const tokens = ["w1", "w2", "w3", "w4", "w5"];
      const results = await Promise.all(tokens.map((t) => claim(store, seedOf(item), t, LEASE_MS)));
      const wins = results.filter((r) => r.claimed);
      expect(wins).toHaveLength(1);
      const winner = claimed(wins[0] as ClaimResult);
      expect(winner.attempts).toBe(1);
      for (const r of results) {
        if (r.claimed) continue;
        expect(r.current?.status).toBe("running");
        expect(r.current?.leaseToken).toBe(winner.leaseToken);
      }
      expect(await getJob(store, item.id)).toEqual(winner);
    });

    it("of concurrent claims of one missing job, exactly one builds it", async () => {
      const { store, clock } = await setup();
      const item = jobItem(clock);
      const results = await Promise.all(["a", "b", "c"].map((t) => claim(store, seedOf(item), t, LEASE_MS)));
      expect(results.filter((r) => r.claimed)).toHaveLength(1);
      const stored = await getJob(store, item.id);
      expect(stored).toMatchObject({ attempts: 1, claimedFrom: "missing", status: "running" });
    });

    it("fails while the job runs under a live lease, even at the lease's last millisecond", async () => {
      const { store, clock } = await setup();
      const { item, running } = await runningJob(store, clock, "owner");
      const dup = await claim(store, seedOf(item), "dup", LEASE_MS);
      expect(dup.claimed).toBe(false);
      if (dup.claimed) return;
      expect(dup.current).toEqual(running);

      clock.set(running.leaseUntil as number); // leaseUntil < now is still false
      expect((await claim(store, seedOf(item), "dup", LEASE_MS)).claimed).toBe(false);
      expect(await getJob(store, item.id)).toEqual(running);
    });

    it("takes over after the lease expires: claimedFrom running, attempts 2, new token", async () => {
      const { store, clock } = await setup();
      const { item, running } = await runningJob(store, clock, "dead-worker");
      clock.set((running.leaseUntil as number) + 1);
      const revived = claimed(await claim(store, seedOf(item), "rescuer", LEASE_MS));
      expect(revived).toMatchObject({
        status: "running",
        attempts: 2,
        leaseToken: "rescuer",
        leaseUntil: clock.now() + LEASE_MS,
        claimedFrom: "running",
      });
    });

    it("of concurrent takeovers of an expired lease, exactly one wins", async () => {
      const { store, clock } = await setup();
      const { item } = await runningJob(store, clock, "dead-worker");
      clock.advance(LEASE_MS + 1);
      const results = await Promise.all(
        ["r1", "r2", "r3"].map((t) => claim(store, seedOf(item), t, LEASE_MS)),
      );
      expect(results.filter((r) => r.claimed)).toHaveLength(1);
      expect((await getJob(store, item.id))?.attempts).toBe(2);
    });

    it("never runs a terminal job again (duplicate delivery)", async () => {
      const { store, clock } = await setup();
      const { item } = await runningJob(store, clock, "t");
      await finalize(store, item, "t", { outcome: "done", result: { json: "1" }, expiresAt: TTL });
      clock.advance(10 * LEASE_MS);
      const dup = await claim(store, seedOf(item), "dup", LEASE_MS);
      expect(dup.claimed).toBe(false);
      if (dup.claimed) return;
      expect(dup.current?.status).toBe("done");
      expect(dup.current?.attempts).toBe(1);
    });
  });

  // ── heartbeat ────────────────────────────────────────────────────────────────────────────────────

  describe("heartbeat", () => {
    it("renews the lease (a claim after the old expiry still fails) and reports a cancel request", async () => {
      const { store, clock } = await setup();
      const { item, running } = await runningJob(store, clock, "t");
      clock.advance(LEASE_MS / 2);
      const hb = await heartbeat(store, item.id, "t", LEASE_MS);
      expect(hb).toEqual({ held: true, cancelRequested: false, leaseUntil: clock.now() + LEASE_MS });
      expect((await getJob(store, item.id))?.leaseUntil).toBe(clock.now() + LEASE_MS);

      // Past the original lease, within the renewed one: no takeover.
      clock.set((running.leaseUntil as number) + 1);
      expect((await claim(store, seedOf(item), "other", LEASE_MS)).claimed).toBe(false);

      const { outcome, item: requested } = await cancel(store, item.id, TTL);
      expect(outcome).toBe("requested");
      expect(requested).toMatchObject({ status: "running", cancelRequested: true });
      const hb2 = await heartbeat(store, item.id, "t", LEASE_MS);
      expect(hb2).toEqual({ held: true, cancelRequested: true, leaseUntil: clock.now() + LEASE_MS });
    });

    it("with a stale token after a takeover reports held:false and leaves the new owner's lease alone", async () => {
      const { store, clock } = await setup();
      const { item } = await runningJob(store, clock, "old");
      clock.advance(LEASE_MS + 1);
      const revived = claimed(await claim(store, seedOf(item), "new", LEASE_MS));
      clock.advance(1000);
      expect(await heartbeat(store, item.id, "old", LEASE_MS)).toEqual({ held: false });
      expect(await getJob(store, item.id)).toEqual(revived);
    });

    it("reports held:false once the job left running, and for a missing job", async () => {
      const { store, clock } = await setup();
      const { item } = await runningJob(store, clock, "t");
      await finalize(store, item, "t", { outcome: "retry", runAt: clock.now() + 1000, error: "x" });
      expect(await heartbeat(store, item.id, "t", LEASE_MS)).toEqual({ held: false });
      expect(await heartbeat(store, "missing", "t", LEASE_MS)).toEqual({ held: false });
      expect(await getJob(store, "missing")).toBeUndefined();
    });
  });

  // ── finalize ─────────────────────────────────────────────────────────────────────────────────────
});
