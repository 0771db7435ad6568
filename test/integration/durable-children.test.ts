import { describe, expect, it } from "vitest";
import * as z from "zod";
import { loadJobView } from "../../lib/claims/job-bodies.ts";
import { systemClock } from "../../lib/clock.ts";
import { ChildJobError } from "../../lib/errors.ts";
import { defineUnboundKind } from "../../lib/job/kind.ts";
import { cancelJob } from "../../lib/ops/cancel-job.ts";
import { createWorker } from "../../lib/runtime/worker.ts";
import type { JobItem } from "../../lib/store/job-item.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import { OffsetClock } from "../support/clock.ts";
import { type Harness, harnessPerTest, settled } from "../support/engine-harness.ts";
import { CRASH_LEASE_SECONDS } from "../support/takeover.ts";
import { waitFor } from "../support/wait.ts";
import { doomedEngine } from "./crash-switch.ts";

/**
 * Child jobs (`ctx.invoke`, docs/guide/durable-jobs.md "Child jobs") on the real emulators: the
 * parent waits, holding nothing, until its child ends; the child's end resumes it with the result
 * or a ChildJobError; a child is enqueued once per (parent, step) whatever happens in between.
 */
const journal: string[] = [];
const ran = (prefix: string) => journal.filter((l) => l.startsWith(prefix));

const kinds = [
  defineUnboundKind({
    name: "t-double",
    queue: "default",
    payload: z.object({ tag: z.string(), n: z.number() }),
    maxAttempts: 1,
    timeoutSeconds: 30,
    handler: async ({ tag, n }) => {
      journal.push(`${tag}:child`);
      if (n < 0) throw new Error(`no negatives: ${n}`);
      return { doubled: n * 2 };
    },
  }),
  defineUnboundKind({
    name: "t-parent",
    queue: "default",
    payload: z.object({
      tag: z.string(),
      n: z.unknown(),
      kind: z.string().optional(),
      catch: z.boolean().optional(),
      failBeside: z.boolean().optional(),
    }),
    maxAttempts: 3,
    timeoutSeconds: 30,
    handler: async (p, ctx) => {
      journal.push(`${p.tag}:parent:${ctx.attempt}`);
      const child = ctx.invoke(p.kind ?? "t-double", { tag: p.tag, n: p.n }, { name: "double" });
      // A step beside the invoke that fails on the first attempt: that run ends after the child's
      // enqueue and before its step's record, as a crash there would.
      const beside = ctx.step("beside", () => {
        if (p.failBeside && ctx.attempt === 1) throw new Error("crash after the enqueue");
        return "ok";
      });
      try {
        const [result] = await Promise.all([child, beside]);
        return { result };
      } catch (err) {
        if (p.catch && err instanceof ChildJobError)
          return { caught: { status: err.childStatus, error: err.childError, step: err.step } };
        throw err;
      }
    },
  }),
  defineUnboundKind({
    name: "t-parent-many",
    queue: "default",
    payload: z.object({
      tag: z.string(),
      ns: z.array(z.unknown()),
      concurrency: z.number().optional(),
      catch: z.boolean().optional(),
    }),
    maxAttempts: 3,
    timeoutSeconds: 30,
    handler: async (p, ctx) => {
      const payloads = p.ns.map((n) => ({ tag: p.tag, n }));
      const options = {
        name: "many",
        ...(p.concurrency !== undefined ? { concurrency: p.concurrency } : {}),
      };
      try {
        return { results: await ctx.invokeMany("t-double", payloads, options) };
      } catch (err) {
        if (p.catch && err instanceof ChildJobError)
          return { caught: { step: err.step, error: err.childError } };
        throw err;
      }
    },
  }),
];

const harness = harnessPerTest();

/** GET /jobs/{id}'s answer. */
async function viewOf(h: Harness, id: string) {
  const item = await getJob(h.engine.store, id);
  if (!item) throw new Error(`no job ${id}`);
  return loadJobView(h.engine.store, h.engine.claims, item);
}

describe("child jobs", () => {
  it("the parent waits for its child and gets its result; the views link the two", async () => {
    const clock = new OffsetClock();
    const h = await harness.create({ clock, extraKinds: kinds });
    h.startPoller();
    const { job } = await h.engine.producer.enqueue({ kind: "t-parent", payload: { tag: "c1", n: 21 } });
    const done = await settled(h, job.id, "done");
    expect(JSON.parse(done.result ?? "")).toEqual({ result: { doubled: 42 } });
    expect(ran("c1:")).toEqual(["c1:parent:1", "c1:child", "c1:parent:1"]);
    const childId = done.steps?.double?.child ?? "";
    const child = await viewOf(h, childId);
    expect(child).toMatchObject({ kind: "t-double", status: "done", parent: { id: job.id, step: "double" } });
    const steps = await h.engine.durable.stepsOf(job.id);
    expect(steps.steps.find((s) => s.name === "double")).toMatchObject({
      type: "child",
      status: "done",
      child: childId,
      result: { status: "done", result: { doubled: 42 } },
    });
  });

  it("a child that ends dead throws ChildJobError with its error; uncaught, the parent ends dead at once", async () => {
    const clock = new OffsetClock();
    const h = await harness.create({ clock, extraKinds: kinds });
    h.startPoller();
    const caught = await h.engine.producer.enqueue({
      kind: "t-parent",
      payload: { tag: "c2", n: -1, catch: true },
    });
    const uncaught = await h.engine.producer.enqueue({ kind: "t-parent", payload: { tag: "c3", n: -2 } });
    const done = await settled(h, caught.job.id, "done");
    expect(JSON.parse(done.result ?? "")).toEqual({
      caught: { status: "dead", error: "no negatives: -1", step: "double" },
    });
    const dead = await settled(h, uncaught.job.id, "dead");
    expect(dead.lastError).toContain("no negatives: -2");
    // Dead on the run that met the child's end: its replay would meet it again.
    expect(dead.attempts).toBe(1);
    expect(ran("c3:parent")).toHaveLength(2);
  });

  it("a rerun after a run that ended between the child's enqueue and its record enqueues no second child", async () => {
    const clock = new OffsetClock();
    const h = await harness.create({ clock, extraKinds: kinds });
    h.startPoller();
    const { job } = await h.engine.producer.enqueue({
      kind: "t-parent",
      payload: { tag: "c4", n: 5, failBeside: true },
    });
    const done = await settled(h, job.id, "done");
    expect(JSON.parse(done.result ?? "")).toEqual({ result: { doubled: 10 } });
    expect(ran("c4:parent")).toEqual(["c4:parent:1", "c4:parent:2", "c4:parent:2"]);
    expect(ran("c4:child")).toEqual(["c4:child"]);
    expect(h.metrics.total("enqueued")).toBe(2);
  });

  it("a parent whose worker dies between the child's send and its record: the takeover gets the same child, run once", async () => {
    const h = await harness.create({
      clock: systemClock,
      queue: { leaseSeconds: CRASH_LEASE_SECONDS },
      extraKinds: kinds,
    });
    const { job } = await h.engine.producer.enqueue({ kind: "t-parent", payload: { tag: "c9", n: 4 } });
    const event = await h.receive(1, 2);
    // The parent's worker dies once the child's message is out: before the child's item, the parent's record.
    const doomed = doomedEngine(
      harness.emulators(),
      h.engine,
      { name: h.queue.name, url: h.urls.url },
      {
        afterAnswerMatching: (command, input) =>
          command === "SendMessageCommand" && String(input.MessageBody ?? "").includes('"kind":"t-double"'),
      },
    );
    void createWorker(doomed.engine, { recordConcurrency: 1 })(event);
    await waitFor(
      async () => doomed.crash.tripped || undefined,
      "the parent's worker to die after the child's send",
    );
    h.startPoller();
    const done = await settled(h, job.id, "done");
    expect(JSON.parse(done.result ?? "")).toEqual({ result: { doubled: 8 } });
    expect(ran("c9:child")).toEqual(["c9:child"]);
    const child = await getJob(h.engine.store, done.steps?.double?.child ?? "");
    expect(child).toMatchObject({ status: "done", parent: { j: job.id, s: "double" } });
    expect(h.metrics.total("succeeded")).toBe(2);
  });

  it("a child whose worker dies after its finalize, before its parent's resume: its next delivery resumes the parent, once", async () => {
    const h = await harness.create({
      clock: systemClock,
      queue: { leaseSeconds: CRASH_LEASE_SECONDS },
      extraKinds: kinds,
    });
    const { job } = await h.engine.producer.enqueue({ kind: "t-parent", payload: { tag: "c10", n: 6 } });
    await h.worker(await h.receive(1, 2));
    const waiting = await settled(h, job.id, "scheduled");
    const childId = waiting.steps?.double?.child ?? "";
    // The child's worker dies once the child's finalize landed: its end never reached the parent.
    const doomed = doomedEngine(
      harness.emulators(),
      h.engine,
      { name: h.queue.name, url: h.urls.url },
      {
        afterAnswerMatching: (command, input) =>
          command.startsWith("Update") && JSON.stringify(input).includes('"done"'),
      },
    );
    void createWorker(doomed.engine, { recordConcurrency: 1 })(await h.receive(1, 2));
    await waitFor(
      async () => doomed.crash.tripped || undefined,
      "the child's worker to die after its finalize",
    );
    expect(await getJob(h.engine.store, childId)).toMatchObject({ status: "done" });
    expect(await getJob(h.engine.store, job.id)).toMatchObject({
      status: "scheduled",
      waiting: { child: childId },
    });
    h.startPoller();
    const done = await settled(h, job.id, "done");
    expect(JSON.parse(done.result ?? "")).toEqual({ result: { doubled: 12 } });
    expect(ran("c10:")).toEqual(["c10:parent:1", "c10:child", "c10:parent:1"]);
  });

  it("a payload the child's schema refuses, or an unknown kind: the parent's step fails with the validation error, nothing enqueued", async () => {
    const clock = new OffsetClock();
    const h = await harness.create({ clock, extraKinds: kinds });
    h.startPoller();
    const bad = await h.engine.producer.enqueue({ kind: "t-parent", payload: { tag: "c5", n: "five" } });
    const unknown = await h.engine.producer.enqueue({
      kind: "t-parent",
      payload: { tag: "c6", n: 1, kind: "t-nope" },
    });
    const badDead = await settled(h, bad.job.id, "dead");
    expect(badDead.lastError).toMatch(/invoke "double": child of kind "t-double" refused: .*n/);
    expect(badDead.attempts).toBe(1);
    const unknownDead = await settled(h, unknown.job.id, "dead");
    expect(unknownDead.lastError).toMatch(/invoke "double": child of kind "t-nope" refused/);
    expect(ran("c5:child")).toEqual([]);
    expect(h.metrics.total("enqueued")).toBe(2);
    expect(badDead.steps?.double).toBeUndefined();
  });

  it("a parent waiting for its child holds nothing: it is scheduled, waiting for the child by id", async () => {
    const clock = new OffsetClock();
    const h = await harness.create({ clock, extraKinds: kinds });
    const { job } = await h.engine.producer.enqueue({ kind: "t-parent", payload: { tag: "c7", n: 1 } });
    // Only the parent's message is taken: the child stays queued, so the parent is seen waiting.
    await h.worker(await h.receive(1));
    const waiting = await waitFor(async () => {
      const item = await getJob(h.engine.store, job.id);
      return item?.waiting ? item : undefined;
    }, "the parent to wait");
    expect(waiting.status).toBe("scheduled");
    expect(waiting.waiting).toMatchObject({ for: "child", child: waiting.steps?.double?.child });
    const view = await viewOf(h, job.id);
    expect(view.waiting).toMatchObject({ for: "child", child: waiting.steps?.double?.child });
  });

  it("cancelling a waiting parent cancels its child, which then resumes nothing", async () => {
    const clock = new OffsetClock();
    const h = await harness.create({ clock, extraKinds: kinds });
    const { job } = await h.engine.producer.enqueue({ kind: "t-parent", payload: { tag: "c8", n: 1 } });
    await h.worker(await h.receive(1));
    const waiting = await waitFor(async () => {
      const item = await getJob(h.engine.store, job.id);
      return item?.waiting ? item : undefined;
    }, "the parent to wait");
    const childId = waiting.steps?.double?.child ?? "";
    expect((await cancelJob(h.engine, job.id)).outcome).toBe("cancelled");
    expect(await getJob(h.engine.store, childId)).toMatchObject({ status: "cancelled" });
    // The child's message finds it cancelled: it never runs, and the parent stays cancelled.
    h.startPoller();
    await expect(settled(h, job.id, "cancelled")).resolves.toMatchObject({ status: "cancelled" });
    expect(ran("c8:child")).toEqual([]);
  });

  it("invokeMany waits for all, results in the payloads' order, never more than `concurrency` children open at once", async () => {
    const clock = new OffsetClock();
    const h = await harness.create({ clock, extraKinds: kinds });
    h.startPoller();
    const ns = [1, 2, 3, 4, 5, 6, 7];
    const { job } = await h.engine.producer.enqueue({
      kind: "t-parent-many",
      payload: { tag: "m1", ns, concurrency: 3 },
    });
    const done = await settled(h, job.id, "done");
    expect(JSON.parse(done.result ?? "")).toEqual({ results: ns.map((n) => ({ doubled: n * 2 })) });
    expect(ran("m1:child")).toHaveLength(ns.length);
    const children = await Promise.all(
      ns.map(
        async (_, i) => (await getJob(h.engine.store, done.steps?.[`many[${i}]`]?.child ?? "")) as JobItem,
      ),
    );
    expect(children.map((c) => c.status)).toEqual(ns.map(() => "done"));
    // When each child was enqueued, the others enqueued before it and not yet ended, and itself: at most 3.
    for (const c of children) {
      const open = children.filter((o) => o.createdAt <= c.createdAt && (o.finishedAt ?? 0) > c.createdAt);
      expect(open.length, c.id).toBeLessThanOrEqual(3);
    }
    expect(Object.values(done.steps ?? {}).every((r) => r.v !== undefined || r.o !== undefined)).toBe(true);
    // Each child step keeps its own place in the handler's order.
    const views = await h.engine.durable.stepsOf(job.id);
    expect(views.steps.map((v) => v.name)).toEqual(ns.map((_, i) => `many[${i}]`));
    expect(new Set(ns.map((_, i) => done.steps?.[`many[${i}]`]?.n)).size).toBe(ns.length);
  });

  it("invokeMany: a failed child fails the call once all ended, with its ChildJobError", async () => {
    const clock = new OffsetClock();
    const h = await harness.create({ clock, extraKinds: kinds });
    h.startPoller();
    const { job } = await h.engine.producer.enqueue({
      kind: "t-parent-many",
      payload: { tag: "m2", ns: [1, -1, 3, -4], concurrency: 2, catch: true },
    });
    const done = await settled(h, job.id, "done");
    expect(JSON.parse(done.result ?? "")).toEqual({ caught: { step: "many[1]", error: "no negatives: -1" } });
    expect(ran("m2:child")).toHaveLength(4);
  });

  it("invokeMany: concurrency outside 1..100, or a payload the child refuses, fails the call by name with nothing enqueued", async () => {
    const clock = new OffsetClock();
    const h = await harness.create({ clock, extraKinds: kinds });
    h.startPoller();
    const zero = await h.engine.producer.enqueue({
      kind: "t-parent-many",
      payload: { tag: "m3", ns: [1], concurrency: 0 },
    });
    const many = await h.engine.producer.enqueue({
      kind: "t-parent-many",
      payload: { tag: "m4", ns: [1], concurrency: 101 },
    });
    const bad = await h.engine.producer.enqueue({
      kind: "t-parent-many",
      payload: { tag: "m5", ns: [1, 2, "three"], concurrency: 5 },
    });
    const zeroDead = await settled(h, zero.job.id, "dead");
    expect(zeroDead.lastError).toContain('invokeMany "many": concurrency 0 is outside 1..100');
    const manyDead = await settled(h, many.job.id, "dead");
    expect(manyDead.lastError).toContain('invokeMany "many": concurrency 101 is outside 1..100');
    const badDead = await settled(h, bad.job.id, "dead");
    expect(badDead.lastError).toMatch(/invokeMany "many": child 2 of kind "t-double" refused: .*n/);
    expect([zeroDead.attempts, manyDead.attempts, badDead.attempts]).toEqual([1, 1, 1]);
    expect(
      ran("m3:")
        .concat(ran("m4:"), ran("m5:"))
        .filter((l) => l.endsWith(":child")),
    ).toEqual([]);
    expect(h.metrics.total("enqueued")).toBe(3);
  });
});
