/**
 * Store conformance: every job transition and every losing race, against real AWS SDK v3 clients on
 * both DynamoDB emulators — dynalite (in-process) and Amazon's DynamoDB Local (Java child process).
 * Each test gets its own table. Time is a ManualClock: leases expire by advancing it, never by sleeping.
 */
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { BatchWriteCommand, GetCommand } from "@aws-sdk/lib-dynamodb";
import { ulid } from "ulid";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadPayload } from "../../lib/claims/job-bodies.ts";
import { InvalidItemState, InvalidStoreInput, ItemNotFound, StoreError } from "../../lib/errors.ts";
import { createStoreContext, type StoreContext } from "../../lib/store/context.ts";
import {
  acquireUniqueLock,
  markQueued,
  putJob,
  putPayload,
  releaseUniqueLock,
  takeOverUniqueLock,
} from "../../lib/store/enqueue-ops.ts";
import type { Finalization } from "../../lib/store/finalize-ops.ts";
import { cancel, finalize, redrive } from "../../lib/store/finalize-ops.ts";
import type { JobItem } from "../../lib/store/job-item.ts";
import { indexKeys, indexPartition, jobKey, shardOf, uniqueKeyLock } from "../../lib/store/keys.ts";
import type { ClaimResult } from "../../lib/store/lease-ops.ts";
import { claim, heartbeat } from "../../lib/store/lease-ops.ts";
import { coolDown, getQueueState } from "../../lib/store/queue-state.ts";
import { getJob, listJobs } from "../../lib/store/read-ops.ts";
import { INDEX_SHARDS } from "../../lib/store/table.ts";
import { unreachableClaimStore } from "../support/claims.ts";
import { ManualClock } from "../support/clock.ts";
import { type DynamoBackend, dynamoBackends, dynamoClient, freshTable } from "../support/dynamo-backends.ts";
import { queuedItem, seedOf } from "../support/jobs.ts";

const LEASE_MS = 30_000;
const QUEUE = "default";
/** A redrive's hold against promotion, far enough out that no test here crosses it. */
const HOLD = Date.parse("2030-01-01T00:00:00Z");
const TTL = Math.floor(Date.parse("2026-02-01T00:00:00Z") / 1000);

/** One ConsumedCapacity report, recorded by a client middleware (the store itself doesn't expose it). */
interface CapacityRecord {
  command: string;
  table: string | undefined;
  units: number | undefined;
}

function jobItem(clock: ManualClock, overrides: Partial<JobItem> = {}): JobItem {
  return queuedItem(clock, { queue: QUEUE, payload: JSON.stringify({ hello: "world" }), ...overrides });
}

function scheduledItem(clock: ManualClock, runAt: number, overrides: Partial<JobItem> = {}): JobItem {
  const id = overrides.id ?? ulid();
  const queue = overrides.queue ?? QUEUE;
  return jobItem(clock, {
    id,
    queue,
    status: "scheduled",
    runAt,
    ...indexKeys(queue, "scheduled", id, runAt),
    ...overrides,
  });
}

function claimed(r: ClaimResult): JobItem {
  if (!r.claimed) throw new Error(`expected a claim, got current=${JSON.stringify(r.current)}`);
  return r.item;
}

/** A JSON payload of exactly `bytes` UTF-8 bytes. */
function payloadOfBytes(bytes: number): string {
  const base = JSON.stringify({ data: "" });
  const json = JSON.stringify({ data: "x".repeat(bytes - base.length) });
  expect(Buffer.byteLength(json)).toBe(bytes);
  return json;
}

/**
 * DynamoDB's item size, roughly: attribute names plus values (strings as UTF-8 bytes, numbers about
 * one byte per two digits plus one, booleans one byte). Deliberately errs on the high side.
 */
function approximateItemBytes(item: Record<string, unknown>): number {
  let total = 0;
  for (const [name, value] of Object.entries(item)) {
    total += Buffer.byteLength(name);
    if (typeof value === "string") total += Buffer.byteLength(value);
    else if (typeof value === "number")
      total += Math.ceil(String(Math.abs(value)).replace(/[.-]/g, "").length / 2) + 1;
    else if (typeof value === "boolean") total += 1;
    else total += Buffer.byteLength(JSON.stringify(value));
  }
  return total;
}

/** The store error an operation reports (the API maps these to codes; the store never does). */
async function storeErrorOf(p: Promise<unknown>): Promise<StoreError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof StoreError) return err;
    throw err;
  }
  throw new Error("expected a StoreError");
}

describe.each(dynamoBackends)("store conformance on $name", (factory) => {
  let backend: DynamoBackend | undefined;
  let client: DynamoDBClient;
  const capacity: CapacityRecord[] = [];

  beforeAll(async () => {
    backend = await factory.start();
    client = dynamoClient(backend.endpoint);
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const out = await next(args);
        const input = args.input as { TableName?: string };
        const output = out.output as { ConsumedCapacity?: { CapacityUnits?: number } };
        capacity.push({
          command: context.commandName ?? "?",
          table: input.TableName,
          units: output.ConsumedCapacity?.CapacityUnits,
        });
        return out;
      },
      { step: "initialize", name: "recordConsumedCapacity" },
    );
  });

  afterAll(async () => {
    client?.destroy();
    await backend?.stop();
  });

  /** A fresh table, clock and store for one test. */
  async function setup() {
    const table = await freshTable(client);
    const clock = new ManualClock();
    const store = createStoreContext(client, table, clock);
    return { table, clock, store };
  }

  /** A queued, due job that `token` has claimed. */
  async function runningJob(
    store: StoreContext,
    clock: ManualClock,
    token = "t1",
    overrides: Partial<JobItem> = {},
  ) {
    const item = jobItem(clock, overrides);
    expect(await putJob(store, item)).toEqual({ created: true });
    const running = claimed(await claim(store, seedOf(item), token, LEASE_MS));
    return { item, running };
  }

  async function listAll(
    store: StoreContext,
    filter: { queue?: string; status?: JobItem["status"] },
    limit: number,
  ) {
    const pages: JobItem[][] = [];
    let cursor: string | undefined;
    for (let i = 0; i < 200; i++) {
      const page = await listJobs(store, { ...filter, limit, ...(cursor ? { cursor } : {}) });
      expect(page.items.length).toBeLessThanOrEqual(limit);
      pages.push(page.items);
      cursor = page.cursor;
      if (!cursor) return pages;
    }
    throw new Error("listJobs never stopped returning a cursor");
  }

  // ── enqueue ──────────────────────────────────────────────────────────────────────────────────────

  describe("putJob", () => {
    it("creates the item once; a second put with the same id reports the current item", async () => {
      const { store, clock } = await setup();
      const item = jobItem(clock);
      expect(await putJob(store, item)).toEqual({ created: true });
      expect(await getJob(store, item.id)).toEqual(item);

      const second = await putJob(store, {
        ...item,
        payload: JSON.stringify({ other: true }),
        maxAttempts: 9,
      });
      expect(second).toEqual({ created: false, current: item });
      expect(await getJob(store, item.id)).toEqual(item);
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
      expect(early.current).toEqual(item);

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
        ...indexKeys(QUEUE, "scheduled", item.id, runAt),
      });
      expect(scheduled?.gsi1pk).toBe(indexPartition(QUEUE, "scheduled", shardOf(item.id)));
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
        ...indexKeys(QUEUE, "dead", item.id, clock.now()),
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
        ...indexKeys(QUEUE, "scheduled", item.id, clock.now()),
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
      expect(new Set(wanted.map((j) => shardOf(j.id))).size).toBeGreaterThanOrEqual(3);

      const pages = await listAll(store, { queue: QUEUE, status: "scheduled" }, 5);
      const ids = pages.flat().map((j) => j.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect([...ids].sort()).toEqual(wanted.map((j) => j.id).sort());
      expect(pages.length).toBeGreaterThanOrEqual(Math.ceil(wanted.length / 5));
      // Within a shard, items come in runAt order.
      for (const shard of new Set(wanted.map((j) => shardOf(j.id)))) {
        const runAts = pages
          .flat()
          .filter((j) => shardOf(j.id) === shard)
          .map((j) => j.runAt);
        expect(runAts).toEqual([...runAts].sort((a, b) => a - b));
      }
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
        encoded({ shard: INDEX_SHARDS }),
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
      expect(queries).toBeLessThanOrEqual(INDEX_SHARDS + 4);
      expect(fromIndex.items.every((j) => shardOf(j.id) >= shard)).toBe(true);
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
