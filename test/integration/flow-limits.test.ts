import { describe, expect, it } from "vitest";
import * as z from "zod";
import { flowKey } from "../../lib/job/flow-key.ts";
import { defineUnboundKind } from "../../lib/job/kind.ts";
import { readFlowKeyState } from "../../lib/store/flow-key-ops.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import { OffsetClock } from "../support/clock.ts";
import { type Harness, harnessPerTest, settled } from "../support/engine-harness.ts";
import { mostAtOnce } from "../support/overlap.ts";
import { deferred, waitFor } from "../support/wait.ts";

/**
 * Several flow limits on one kind (docs/guide/flow-control.md, "Several limits on one kind") on the
 * real emulators: a job starts only when every limit admits it, so no limit's key ever runs more
 * than its concurrency nor starts more units than its rate; a job that waits in one limit's line
 * holds no place in the others; every place is given back when the runs end.
 */
type Run = { id: string; tenant: string; user: string; tokens: number; start: number; end: number };
const runs: Run[] = [];
/** Runs held until the test lets them end (by job id); the others end after `ms`. */
const held = new Map<string, () => void>();
const Job = z.object({
  tenant: z.string(),
  user: z.string(),
  tokens: z.number().int().default(1),
  ms: z.number().default(60),
  hold: z.boolean().optional(),
});
type JobPayload = z.output<typeof Job>;

const handler = async (p: JobPayload, ctx: { job: { id: string } }) => {
  const start = Date.now();
  if (p.hold) {
    const latch = deferred();
    held.set(ctx.job.id, () => latch.resolve());
    await latch.promise;
  } else await new Promise((r) => setTimeout(r, p.ms));
  runs.push({ id: ctx.job.id, tenant: p.tenant, user: p.user, tokens: p.tokens, start, end: Date.now() });
  return null;
};

/** Two limits: 2 runs of a tenant at once, 1 of a user. */
const twoLimits = defineUnboundKind({
  name: "t-two-limits",
  queue: "default",
  payload: Job,
  maxAttempts: 3,
  timeoutSeconds: 30,
  flow: [
    { name: "tenant", key: (p) => p.tenant, concurrency: 2 },
    { name: "user", key: (p) => p.user, concurrency: 1 },
  ],
  handler,
});
/** The rate's numbers: 20 units every 2 s, 20 at once after a quiet spell. */
const RATE = { limit: 20, periodSeconds: 2 };
/** Three limits: tenant-report's shape at a test's scale (3 a tenant, 1 a user, a shared rate of units). */
const threeLimits = defineUnboundKind({
  name: "t-three-limits",
  queue: "default",
  payload: Job,
  maxAttempts: 3,
  timeoutSeconds: 30,
  flow: [
    { name: "tenant", key: (p) => p.tenant, concurrency: 3 },
    { name: "user", key: (p) => p.user, concurrency: 1 },
    { name: "llm", key: () => "llm", rate: { ...RATE, cost: (p) => p.tokens } },
  ],
  handler,
});
const kinds = [twoLimits, threeLimits];
const harness = harnessPerTest();

/** The most runs going at one instant among those `of` picks. */
const peak = (of: (r: Run) => boolean) => mostAtOnce(runs.filter(of).map((r) => [r.start, r.end] as const));

/** Every key's places are back: no holder left in any of them. */
async function everyPlaceBack(h: Harness, kind: string, keys: { limit?: string; key: string }[]) {
  await waitFor(async () => {
    for (const { limit, key } of keys) {
      const state = await readFlowKeyState(h.engine.store, flowKey(kind, key, limit));
      if (Object.keys(state.holders).length > 0) return false;
    }
    return true;
  }, "every place to be given back");
}

describe("several flow limits on one kind", () => {
  it("a job waits in the line of the first limit that refuses it, holding no place in the others", async () => {
    const h = await harness.create({ clock: new OffsetClock(), extraKinds: kinds });
    // Up to four runs held at once: each poller runs two invocations.
    for (let n = 0; n < 3; n++) h.startPoller();
    const enqueue = async (tenant: string, user: string, hold = true) =>
      (await h.engine.producer.enqueue({ kind: "t-two-limits", payload: { tenant, user, hold } })).job.id;
    // ann's first job runs; her second, of another tenant, is refused by `user` (ann's one place).
    const first = await enqueue("acme", "ann");
    await waitFor(async () => held.has(first), "the first job to run");
    const second = await enqueue("globex", "ann");
    const parked = await waitFor(async () => {
      const job = await getJob(h.engine.store, second);
      return job?.parked ? job : undefined;
    }, "the second job to park");
    expect(parked.parkedIn).toBe("user");
    expect((await h.engine.flow.keyView("t-two-limits", "ann", "user")).waiting).toBe(1);
    // It holds no place of its tenant while it waits: globex's places are both free for bob and cy.
    expect((await readFlowKeyState(h.engine.store, flowKey("t-two-limits", "globex"))).holders).toEqual({});
    const bob = await enqueue("globex", "bob");
    const cy = await enqueue("globex", "cy");
    await waitFor(async () => held.has(bob) && held.has(cy), "globex's other users to run");
    // globex is full now (bob, cy): ann's place, once free, goes to her parked job, which then
    // waits in globex's line (its first refusing limit), and gives ann's place back meanwhile.
    held.get(first)?.();
    await settled(h, first, "done");
    await waitFor(async () => {
      const job = await getJob(h.engine.store, second);
      return job?.parked && job.parkedIn === undefined ? job : undefined;
    }, "the second job to wait in its tenant's line");
    expect((await readFlowKeyState(h.engine.store, flowKey("t-two-limits", "ann", "user"))).holders).toEqual(
      {},
    );
    held.get(bob)?.();
    await waitFor(async () => held.has(second), "the second job to run once globex has a place");
    for (const id of [second, cy]) held.get(id)?.();
    for (const id of [second, bob, cy]) await settled(h, id, "done");
    await everyPlaceBack(h, "t-two-limits", [
      { key: "acme" },
      { key: "globex" },
      ...["ann", "bob", "cy"].map((key) => ({ limit: "user", key })),
    ]);
  }, 60_000);

  it("under two limits no tenant runs more than 2 at once and no user more than 1, whatever the mix", async () => {
    const h = await harness.create({ clock: new OffsetClock(), extraKinds: kinds });
    runs.length = 0;
    // 3 tenants × 4 users (each user works for every tenant), 36 jobs.
    const tenants = ["t1", "t2", "t3"];
    const users = ["u1", "u2", "u3", "u4"];
    const jobs = await h.engine.producer.enqueueBatch(
      Array.from({ length: 36 }, (_, n) => ({
        kind: "t-two-limits",
        payload: { tenant: tenants[n % 3], user: users[Math.floor(n / 3) % 4], ms: 80 },
      })),
    );
    h.startPoller();
    for (const j of jobs) await settled(h, j.id ?? "", "done", 60_000);
    expect(runs).toHaveLength(36);
    const tenantPeaks = tenants.map((t) => peak((r) => r.tenant === t));
    const userPeaks = users.map((u) => peak((r) => r.user === u));
    expect(Math.max(...tenantPeaks)).toBeLessThanOrEqual(2);
    expect(Math.max(...userPeaks)).toBe(1);
    // The limits were met, not idle: some tenant ran 2 at once.
    expect(Math.max(...tenantPeaks)).toBe(2);
    await everyPlaceBack(h, "t-two-limits", [
      ...tenants.map((key) => ({ key })),
      ...users.map((key) => ({ limit: "user", key })),
    ]);
  }, 90_000);

  it("with ten runs at once (five pollers), 40 jobs of users who work for both tenants: no tenant over 3, no user over 1", async () => {
    const h = await harness.create({ clock: new OffsetClock(), extraKinds: kinds });
    runs.length = 0;
    // The races of several copies of one job (a hand-over's, and the one still deciding) show only
    // with many deliveries at once: five pollers of two invocations each.
    for (let n = 0; n < 5; n++) h.startPoller();
    const users = ["u1", "u2", "u3", "u4", "u5"];
    const jobs = await h.engine.producer.enqueueBatch(
      Array.from({ length: 40 }, (_, n) => ({
        kind: "t-three-limits",
        payload: { tenant: n % 2 ? "t2" : "t1", user: users[n % 5], tokens: 1, ms: 300 },
      })),
    );
    for (const j of jobs) await settled(h, j.id ?? "", "done", 90_000);
    expect(Math.max(...["t1", "t2"].map((t) => peak((r) => r.tenant === t)))).toBeLessThanOrEqual(3);
    expect(Math.max(...users.map((u) => peak((r) => r.user === u)))).toBe(1);
  }, 120_000);

  it("under three limits: tenants at most 3 at once, users 1, and the shared rate's units never started ahead of it", async () => {
    const h = await harness.create({ clock: new OffsetClock(), extraKinds: kinds });
    runs.length = 0;
    const tenants = ["t1", "t2"];
    const users = ["u1", "u2", "u3", "u4", "u5", "u6", "u7", "u8"];
    // 16 jobs of 2..8 units: 79 units against 20 at once then 10 a second (5.9 s at least).
    const payloads = Array.from({ length: 16 }, (_, n) => ({
      tenant: tenants[n % 2] as string,
      user: users[n % 8] as string,
      tokens: 2 + ((n * 5) % 7),
      ms: 50,
    }));
    const units = payloads.reduce((sum, p) => sum + p.tokens, 0);
    const enqueuedAt = Date.now();
    const jobs = await h.engine.producer.enqueueBatch(
      payloads.map((payload) => ({ kind: "t-three-limits", payload })),
    );
    h.startPoller();
    for (const j of jobs) await settled(h, j.id ?? "", "done", 90_000);
    expect(runs).toHaveLength(16);
    expect(Math.max(...tenants.map((t) => peak((r) => r.tenant === t)))).toBeLessThanOrEqual(3);
    expect(Math.max(...users.map((u) => peak((r) => r.user === u)))).toBe(1);
    // The rate (GCRA): by any time t, the units started are at most the burst plus what the rate
    // earned since the first enqueue (a start never comes before its reserved turn).
    const perMs = RATE.limit / (RATE.periodSeconds * 1000);
    let started = 0;
    for (const r of [...runs].sort((a, b) => a.start - b.start)) {
      started += r.tokens;
      expect(started, `units started by ${r.start - enqueuedAt} ms`).toBeLessThanOrEqual(
        RATE.limit + (r.start - enqueuedAt) * perMs + 1,
      );
    }
    // So the last start came no sooner than the units past the burst take to earn.
    const lastStart = Math.max(...runs.map((r) => r.start));
    expect(lastStart - enqueuedAt).toBeGreaterThanOrEqual((units - RATE.limit) / perMs - 1);
    await everyPlaceBack(h, "t-three-limits", [
      ...tenants.map((key) => ({ key })),
      ...users.map((key) => ({ limit: "user", key })),
    ]);
  }, 120_000);
});
