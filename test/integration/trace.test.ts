import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { beforeEach, describe, expect, test } from "vitest";
import * as z from "zod";
import { handleEnqueueInvoke } from "../../lib/api/invoke.ts";
import { createApiHandler } from "../../lib/api/routes.ts";
import { systemClock } from "../../lib/clock.ts";
import { defineUnboundKind } from "../../lib/job/kind.ts";
import { getGroup } from "../../lib/store/group-read-ops.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import { harnessPerTest, settled } from "../support/engine-harness.ts";
import { type HttpRequest, httpApiEvent } from "../support/lambda-events.ts";
import { recordSpans } from "../support/span-recorder.ts";
import { waitFor } from "../support/wait.ts";

/** A job whose run records a durable step, fans out a group of two echoes, folded by "test-trace-fold", and enqueues one follow-up. */
const spawner = defineUnboundKind({
  name: "test-trace-spawner",
  queue: "default",
  payload: z.object({ n: z.number().int() }),
  maxAttempts: 2,
  timeoutSeconds: 60,
  handler: async ({ n }, ctx) => {
    const count = await ctx.step("count", async () => n);
    const group = await ctx.group({
      children: Array.from({ length: count }, (_, i) => ({ kind: "echo", payload: { i } })),
      onComplete: { kind: "test-trace-fold", payload: {} },
    });
    await ctx.enqueue("echo", { followUp: true });
    return { group: group.id };
  },
});

const fold = defineUnboundKind({
  name: "test-trace-fold",
  queue: "default",
  payload: z.object({}),
  maxAttempts: 2,
  timeoutSeconds: 60,
  handler: async (_payload, ctx) => ({ group: ctx.completion?.groupId }),
});

/** A lean kind: its enqueue writes no item, so its claim builds the job from the message. */
const lean = defineUnboundKind({
  name: "test-trace-lean",
  queue: "default",
  lane: "lean",
  payload: z.json(),
  maxAttempts: 2,
  timeoutSeconds: 60,
  handler: async (payload) => payload,
});

const exporter = recordSpans();
beforeEach(() => exporter.reset());

const harness = harnessPerTest();
const PRODUCER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const PRODUCER_SPAN = "00f067aa0ba902b7";
const TRACEPARENT = `00-${PRODUCER_TRACE}-${PRODUCER_SPAN}-01`;

const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;
const idOf = (s: ReadableSpan) => s.spanContext().spanId;
const jobOf = (s: ReadableSpan) => s.attributes["skyforge.job.id"];

/** The one span named `name` for job `id` (the enqueue span and each attempt's run span carry it). */
function spanOf(name: string, id: string): ReadableSpan {
  const found = exporter.getFinishedSpans().filter((s) => s.name === name && jobOf(s) === id);
  expect(found, `${name} of ${id}`).toHaveLength(1);
  return found[0] as ReadableSpan;
}

describe("one trace per job (an in-memory span exporter)", () => {
  test("a trace from an HTTP enqueue through a group to its completion job has one trace id, each span under the one that made it", async () => {
    const h = await harness.create({ clock: systemClock, extraKinds: [spawner, fold] });
    const api = createApiHandler(h.engine);
    const call = async (req: HttpRequest) => {
      const res = await api(httpApiEvent(req), {} as never);
      return { status: res.statusCode, body: JSON.parse(String(res.body)) };
    };
    const posted = await call({
      method: "POST",
      path: "/jobs",
      headers: { traceparent: TRACEPARENT, tracestate: "vendor=abc" },
      json: { kind: "test-trace-spawner", payload: { n: 2 } },
    });
    expect(posted.status).toBe(201);
    const rootId = posted.body.id as string;
    // The job keeps the producer's context: its item, and its view.
    const rootItem = await getJob(h.engine.store, rootId);
    const enqueueRoot = spanOf("skyforge.enqueue test-trace-spawner", rootId);
    expect(rootItem?.trace).toBe(`00-${PRODUCER_TRACE}-${idOf(enqueueRoot)}-01;vendor=abc`);
    expect(posted.body.traceparent).toBe(`00-${PRODUCER_TRACE}-${idOf(enqueueRoot)}-01`);

    const poller = h.startPoller();
    const done = await settled(h, rootId, "done");
    const groupId = (JSON.parse(done.result ?? "{}") as { group: string }).group;
    const group = await waitFor(async () => {
      const g = await getGroup(h.engine.store, groupId);
      return g?.status === "succeeded" ? g : undefined;
    }, `group ${groupId} to succeed`);
    const completionId = group.completionJobId ?? "";
    await settled(h, completionId, "done");
    // The root's run span ends before its job's end is written, so it is exported by now.
    const runRoot = spanOf("skyforge.run test-trace-spawner", rootId);
    const followUps = exporter
      .getFinishedSpans()
      .filter((s) => s.name === "skyforge.enqueue echo" && parentOf(s) === idOf(runRoot));
    expect(followUps).toHaveLength(1);
    // A durable step is a span of the attempt that ran it.
    expect(parentOf(spanOf("skyforge.step count", rootId))).toBe(idOf(runRoot));
    const followUpId = String(jobOf(followUps[0] as ReadableSpan));
    await settled(h, followUpId, "done");
    await poller.stop();

    // Every span is of the producer's trace.
    const spans = exporter.getFinishedSpans();
    expect(new Set(spans.map((s) => s.spanContext().traceId))).toEqual(new Set([PRODUCER_TRACE]));

    // enqueue ← producer; run ← enqueue; group ← run; each child's enqueue ← group, run ← its enqueue.
    expect(parentOf(enqueueRoot)).toBe(PRODUCER_SPAN);
    expect(parentOf(runRoot)).toBe(idOf(enqueueRoot));
    expect(runRoot.attributes).toMatchObject({
      "skyforge.job.kind": "test-trace-spawner",
      "skyforge.queue": h.queue.name,
      "skyforge.attempt": 1,
      "skyforge.outcome": "done",
    });
    const groupSpan = spans.find((s) => s.name === "skyforge.group");
    expect(groupSpan && parentOf(groupSpan)).toBe(idOf(runRoot));
    expect(groupSpan?.attributes["skyforge.group.id"]).toBe(groupId);
    const children = (await h.engine.groups.children(groupId, { limit: 10 })).items;
    expect(children).toHaveLength(2);
    for (const child of children) {
      const enqueued = spanOf("skyforge.enqueue echo", child.id);
      expect(parentOf(enqueued)).toBe(groupSpan && idOf(groupSpan));
      expect(parentOf(spanOf("skyforge.run echo", child.id))).toBe(idOf(enqueued));
    }
    // The completion job: enqueued under the group's span (by whichever child ended last), run under that.
    const enqueueFold = spanOf("skyforge.enqueue test-trace-fold", completionId);
    expect(parentOf(enqueueFold)).toBe(groupSpan && idOf(groupSpan));
    expect(parentOf(spanOf("skyforge.run test-trace-fold", completionId))).toBe(idOf(enqueueFold));
    // The follow-up (ctx.enqueue): under the run that made it.
    const enqueueFollow = spanOf("skyforge.enqueue echo", followUpId);
    expect(parentOf(enqueueFollow)).toBe(idOf(runRoot));
    expect(parentOf(spanOf("skyforge.run echo", followUpId))).toBe(idOf(enqueueFollow));
  });

  test("POST /groups and /jobs/batch with a traceparent: the group and each job are spans of it; a malformed one is ignored, never refused", async () => {
    const h = await harness.create({ clock: systemClock, extraKinds: [fold] });
    const api = createApiHandler(h.engine);
    const call = async (req: HttpRequest) => {
      const res = await api(httpApiEvent(req), {} as never);
      return { status: res.statusCode, body: JSON.parse(String(res.body)) };
    };
    const created = await call({
      method: "POST",
      path: "/groups",
      headers: { traceparent: TRACEPARENT },
      json: {
        children: [{ kind: "echo", payload: 1 }],
        onComplete: { kind: "test-trace-fold", payload: {} },
      },
    });
    expect(created.status).toBe(201);
    const groupSpan = exporter.getFinishedSpans().find((s) => s.name === "skyforge.group");
    expect(groupSpan && parentOf(groupSpan)).toBe(PRODUCER_SPAN);
    const stored = await getGroup(h.engine.store, created.body.id);
    expect(stored?.trace).toBe(`00-${PRODUCER_TRACE}-${groupSpan && idOf(groupSpan)}-01`);
    const [child] = (await h.engine.groups.children(created.body.id, { limit: 10 })).items;
    expect(parentOf(spanOf("skyforge.enqueue echo", child?.id ?? ""))).toBe(groupSpan && idOf(groupSpan));

    const batch = await call({
      method: "POST",
      path: "/jobs/batch",
      headers: { traceparent: TRACEPARENT },
      json: {
        jobs: [
          { kind: "echo", payload: 1 },
          { kind: "echo", payload: 2 },
        ],
      },
    });
    expect(batch.status).toBe(200);
    for (const r of batch.body.results as { id: string }[]) {
      const enqueued = spanOf("skyforge.enqueue echo", r.id);
      expect(enqueued.spanContext().traceId).toBe(PRODUCER_TRACE);
      expect(parentOf(enqueued)).toBe(PRODUCER_SPAN);
      expect((await getJob(h.engine.store, r.id))?.trace).toBe(`00-${PRODUCER_TRACE}-${idOf(enqueued)}-01`);
    }

    // Invoke: a traceparent field beside the request, taken off before the request is checked.
    const invoked = await handleEnqueueInvoke(h.engine, {
      kind: "echo",
      payload: 3,
      traceparent: TRACEPARENT,
    });
    const invokedId = (invoked as { id: string }).id;
    expect(parentOf(spanOf("skyforge.enqueue echo", invokedId))).toBe(PRODUCER_SPAN);
    expect((await getJob(h.engine.store, invokedId))?.trace).toMatch(new RegExp(`^00-${PRODUCER_TRACE}-`));

    for (const bad of ["00-xyz", `00-${"0".repeat(32)}-${PRODUCER_SPAN}-01`, `ff-${PRODUCER_TRACE}`]) {
      const res = await call({
        method: "POST",
        path: "/jobs",
        headers: { traceparent: bad },
        json: { kind: "echo", payload: bad },
      });
      expect(res.status).toBe(201);
      const enqueued = spanOf("skyforge.enqueue echo", res.body.id);
      // A root of its own trace: nothing of the malformed header is kept.
      expect(enqueued.parentSpanContext).toBeUndefined();
      expect(enqueued.spanContext().traceId).not.toBe(PRODUCER_TRACE);
    }
  });

  test("a job built from its message (a lean kind: no item at enqueue) keeps the producer's trace, and its run is a span under its enqueue", async () => {
    const h = await harness.create({ clock: systemClock, extraKinds: [lean] });
    const { job } = await h.engine.producer.enqueue(
      { kind: "test-trace-lean", payload: 1 },
      { job: { trace: `${TRACEPARENT};vendor=abc` } },
    );
    expect(await getJob(h.engine.store, job.id)).toBeUndefined();
    const poller = h.startPoller();
    const done = await settled(h, job.id, "done");
    await poller.stop();
    const enqueued = spanOf("skyforge.enqueue test-trace-lean", job.id);
    expect(done.trace).toBe(`00-${PRODUCER_TRACE}-${idOf(enqueued)}-01;vendor=abc`);
    const run = spanOf("skyforge.run test-trace-lean", job.id);
    expect(parentOf(run)).toBe(idOf(enqueued));
    expect(run.parentSpanContext?.traceState?.get("vendor")).toBe("abc");
  });
});
