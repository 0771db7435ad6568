import { describe, expect, it } from "vitest";
import { ClientError } from "../../lib/errors.ts";
import { redriveJob } from "../../lib/producer/redrive.ts";
import { toJobView } from "../../lib/store/job-item.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import { OffsetClock } from "../support/clock.ts";
import { harnessPerTest, settled } from "../support/engine-harness.ts";
import { kindOnDefaultQueue } from "../support/test-kinds.ts";
import { waitFor } from "../support/wait.ts";

/**
 * Start deadlines (docs/architecture.md §4): a job that hasn't started `startWithinSeconds` after it
 * was due never runs; it ends dead, "start deadline passed". The clock is moved, not waited on.
 */
const runs: string[] = [];
const kinds = [
  kindOnDefaultQueue("deadline-echo", { maxAttempts: 3, timeoutSeconds: 30 }, async (_p, ctx) => {
    runs.push(ctx.job.id);
    return { attempt: ctx.attempt };
  }),
  // A kind's own default deadline, which an enqueue's overrides.
  kindOnDefaultQueue(
    "deadline-default",
    { maxAttempts: 3, timeoutSeconds: 30, startWithinSeconds: 5 },
    async (_p, ctx) => {
      runs.push(ctx.job.id);
      return { attempt: ctx.attempt };
    },
  ),
  // No item until a claim builds it from the message: the deadline travels in the message.
  kindOnDefaultQueue(
    "deadline-lean",
    { maxAttempts: 3, timeoutSeconds: 30, lane: "lean" },
    async (_p, ctx) => {
      runs.push(ctx.job.id);
      return { attempt: ctx.attempt };
    },
  ),
  // No claim: its one write records the end.
  kindOnDefaultQueue(
    "deadline-unclaimed",
    { maxAttempts: 3, timeoutSeconds: 30, lane: "at-least-once" },
    async (_p, ctx) => {
      runs.push(ctx.job.id);
      return { attempt: ctx.attempt };
    },
  ),
  kindOnDefaultQueue(
    "deadline-flaky",
    { maxAttempts: 3, timeoutSeconds: 30, backoff: { baseSeconds: 1, maxSeconds: 1 } },
    async (_p, ctx) => {
      runs.push(ctx.job.id);
      if (ctx.attempt === 1) throw new Error("first attempt fails");
      return { attempt: ctx.attempt };
    },
  ),
];

const harness = harnessPerTest();

describe("start deadlines", () => {
  it("a job not started within its deadline of being due never runs: it ends dead, saying why; one within it runs", async () => {
    const clock = new OffsetClock();
    const h = await harness.create({ clock, extraKinds: kinds });
    const enqueue = (kind: string, startWithinSeconds?: number) =>
      h.engine.producer.enqueue({ kind, payload: {}, ...(startWithinSeconds ? { startWithinSeconds } : {}) });
    const late = await enqueue("deadline-echo", 2);
    const inTime = await enqueue("deadline-echo", 10);
    const byKind = await enqueue("deadline-default");
    const lean = await enqueue("deadline-lean", 2);
    const overridden = await enqueue("deadline-default", 60);
    const item = await getJob(h.engine.store, late.job.id);
    expect(item?.startBy).toBe((item?.runAt ?? Number.NaN) + 2000);
    // As if the queue were paused for 6 s: nothing started, then the workers come.
    clock.advance(6000);
    h.startPoller();
    const dead = await settled(h, late.job.id, "dead");
    expect(dead.lastError).toBe("start deadline passed: not started within 2 s of being due");
    expect(await settled(h, byKind.job.id, "dead")).toMatchObject({
      lastError: "start deadline passed: not started within 5 s of being due",
    });
    await settled(h, inTime.job.id, "done");
    await settled(h, overridden.job.id, "done");
    expect(runs).not.toContain(late.job.id);
    expect(runs).not.toContain(byKind.job.id);
    expect(await settled(h, lean.job.id, "dead")).toMatchObject({
      lastError: "start deadline passed: not started within 2 s of being due",
    });
    expect(runs).not.toContain(lean.job.id);
    expect(h.metrics.total("dead")).toBe(3);
    // An operator's retry runs it: its deadline goes with the redrive.
    await redriveJob(h.engine, late.job.id);
    expect(await settled(h, late.job.id, "done")).not.toHaveProperty("startBy");
    expect(runs).toContain(late.job.id);
    const view = await enqueue("deadline-echo", 1);
    expect(view.job.startBy).toBe(new Date(Date.parse(view.job.runAt) + 1000).toISOString());
  });

  it("a job whose deadline passed before it ran shows it never started: no attempt, no start, no run in its history", async () => {
    const clock = new OffsetClock();
    const h = await harness.create({ clock, extraKinds: kinds });
    const ids: string[] = [];
    for (const kind of ["deadline-echo", "deadline-lean", "deadline-unclaimed"])
      ids.push((await h.engine.producer.enqueue({ kind, payload: {}, startWithinSeconds: 2 })).job.id);
    clock.advance(6000);
    h.startPoller();
    for (const id of ids) {
      const dead = await settled(h, id, "dead");
      expect(dead.lastError, dead.kind).toMatch(/^start deadline passed/);
      expect(dead.attempts, dead.kind).toBe(0);
      expect(dead.startedAt, dead.kind).toBeUndefined();
      expect(dead.runner, dead.kind).toBeUndefined();
      expect(dead.history, dead.kind).toBeUndefined();
      const view = toJobView(dead);
      expect(view, dead.kind).toMatchObject({ status: "dead", attempts: 0 });
      expect(view, dead.kind).not.toHaveProperty("startedAt");
      expect(view, dead.kind).not.toHaveProperty("history");
    }
    expect(runs.filter((id) => ids.includes(id))).toEqual([]);
  });

  it("a retry doesn't move the deadline: a first attempt that failed, retried after it, ends dead", async () => {
    const clock = new OffsetClock();
    const h = await harness.create({ clock, extraKinds: kinds, random: () => 0 });
    h.startPoller();
    const { job } = await h.engine.producer.enqueue({
      kind: "deadline-flaky",
      payload: {},
      startWithinSeconds: 3,
    });
    // The first attempt ran and failed; its retry waits out its backoff while the clock passes the deadline.
    await waitFor(async () => runs.includes(job.id) || undefined, "the first attempt");
    clock.advance(10_000);
    const dead = await settled(h, job.id, "dead");
    expect(dead.lastError).toMatch(/^start deadline passed/);
    expect(runs.filter((id) => id === job.id)).toHaveLength(1);
    // The one attempt that ran is all it shows: its start, its failure; none for the retry that never ran.
    expect(dead.attempts).toBe(1);
    expect(dead.history?.map((r) => [r.a, r.o])).toEqual([[1, "retry"]]);
    expect(dead.startedAt).toBe(dead.history?.[0]?.s);
  });

  it("refuses a deadline that is not a whole number of seconds from 1 to SQS's retention: 400, nothing written", async () => {
    const h = await harness.create({ clock: new OffsetClock(), extraKinds: kinds });
    for (const startWithinSeconds of [0, -1, 1.5, 14 * 86_400 + 1, "10"]) {
      const err = await h.engine.producer
        .enqueue({ kind: "deadline-echo", payload: {}, startWithinSeconds })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(err, String(startWithinSeconds)).toBeInstanceOf(ClientError);
      expect((err as ClientError).issues?.[0]?.path).toBe("startWithinSeconds");
    }
    expect(h.metrics.total("enqueued")).toBe(0);
  });
});
