import { describe, expect, it } from "vitest";
import * as z from "zod";
import { createApiHandler } from "../../lib/api/routes.ts";
import { batchKindDefinition } from "../../lib/job/batch.ts";
import { defineUnboundKind } from "../../lib/job/kind.ts";
import type { JobView } from "../../lib/job/schemas.ts";
import type { Engine } from "../../lib/services/engine-services.ts";
import { getGroup } from "../../lib/store/group-read-ops.ts";
import { getJob, listJobs } from "../../lib/store/read-ops.ts";
import { OffsetClock } from "../support/clock.ts";
import { type Harness, harnessPerTest, settled } from "../support/engine-harness.ts";
import { type HttpRequest, httpApiEvent } from "../support/lambda-events.ts";
import { kindOnDefaultQueue } from "../support/test-kinds.ts";
import { waitFor } from "../support/wait.ts";

// onExhausted "pause" (docs/architecture.md §21) on the emulators: a job whose attempts ran out waits
// paused (GET shows it, GET /jobs?status=paused lists it, the metric counts it) until an operator
// resumes it through the API, with a new payload or not, or ends it; a paused group child keeps its
// group open.

const harness = harnessPerTest();

const fragile = kindOnDefaultQueue(
  "fragile",
  { maxAttempts: 2, timeoutSeconds: 30, onExhausted: "pause", payload: z.object({ ok: z.boolean() }) },
  async ({ ok }) => {
    if (!ok) throw new Error("the partner refused it");
    return { ok };
  },
);

/** Keyed kinds that pause: each computes its key from `key`, and fails unless `ok`. */
const Keyed = z.object({ key: z.string(), ok: z.boolean() });
const failUnlessOk = async ({ key, ok }: z.output<typeof Keyed>) => {
  if (!ok) throw new Error("the partner refused it");
  return { key };
};
const keyedKinds = [
  defineUnboundKind({
    name: "fragile-flow",
    queue: "default",
    payload: Keyed,
    maxAttempts: 1,
    timeoutSeconds: 30,
    onExhausted: "pause",
    flow: { key: (p) => p.key, concurrency: 1 },
    handler: failUnlessOk,
  }),
  defineUnboundKind({
    name: "fragile-singleton",
    queue: "default",
    payload: Keyed,
    maxAttempts: 1,
    timeoutSeconds: 30,
    onExhausted: "pause",
    singleton: { key: (p) => p.key, mode: "queue-one" },
    handler: failUnlessOk,
  }),
  batchKindDefinition({
    name: "fragile-batch",
    queue: "default",
    payload: Keyed,
    maxAttempts: 1,
    timeoutSeconds: 30,
    onExhausted: "pause",
    key: (p) => p.key,
    batch: { maxSize: 5, maxWaitSeconds: 1, policy: "immediate" },
    handler: async (items) =>
      items.map((i) => (i.payload.ok ? { key: i.payload.key } : new Error("the partner refused it"))),
  }),
];

async function setUp(): Promise<Harness> {
  // Backoff of a second: the second attempt comes within the test's bounds.
  const h = await harness.create({
    clock: new OffsetClock(),
    queue: { backoff: { baseSeconds: 1, maxSeconds: 1 } },
    extraKinds: [fragile, ...keyedKinds],
  });
  h.startPoller();
  return h;
}

async function call(
  engine: Engine,
  req: HttpRequest,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await createApiHandler(engine)(httpApiEvent(req), {} as never);
  return { status: res.statusCode ?? 0, body: JSON.parse(String(res.body)) };
}

const resume = (engine: Engine, id: string, json?: unknown) =>
  call(engine, {
    method: "POST",
    path: `/jobs/${id}/resume`,
    route: "/jobs/{id}/resume",
    ...(json !== undefined ? { json } : {}),
  });

async function pausedJob(h: Harness): Promise<string> {
  const { job } = await h.engine.producer.enqueue({ kind: "fragile", payload: { ok: false } });
  await settled(h, job.id, "paused");
  return job.id;
}

describe("a kind that pauses when its attempts run out", () => {
  it("waits paused after its last attempt: shown, listed, counted; resumed with a new payload it finishes", async () => {
    const h = await setUp();
    const id = await pausedJob(h);
    const shown = await call(h.engine, { method: "GET", path: `/jobs/${id}`, route: "/jobs/{id}" });
    expect(shown.body).toMatchObject({ status: "paused", attempts: 2, lastError: "the partner refused it" });
    const history = shown.body.history as JobView["history"];
    expect(history?.map((a) => [a.attempt, a.outcome])).toEqual([
      [1, "retry"],
      [2, "paused"],
    ]);
    const listed = await call(h.engine, {
      method: "GET",
      path: "/jobs",
      route: "/jobs",
      query: "queue=default&status=paused",
    });
    expect((listed.body.items as JobView[]).map((j) => j.id)).toEqual([id]);
    expect(h.metrics.total("paused")).toBe(1);
    expect(h.metrics.total("dead")).toBe(0);
    const queues = await call(h.engine, { method: "GET", path: "/queues", route: "/queues" });
    expect((queues.body.items as { name: string; counts: { paused: number } }[])[0]?.counts.paused).toBe(1);

    const resumed = await resume(h.engine, id, { payload: { ok: true } });
    expect(resumed.status).toBe(200);
    expect(resumed.body).toMatchObject({ id, status: "queued", attempts: 0, payload: { ok: true } });
    const done = await settled(h, id, "done");
    expect(JSON.parse(done.result ?? "null")).toEqual({ ok: true });
    expect((await listJobs(h.engine.store, { queue: "default", status: "paused", limit: 10 })).items).toEqual(
      [],
    );
    const after = await call(h.engine, { method: "GET", path: `/jobs/${id}`, route: "/jobs/{id}" });
    expect((after.body.history as JobView["history"])?.map((a) => a.outcome)).toEqual([
      "retry",
      "paused",
      "done",
    ]);
  }, 30_000);

  it("resumed without a body, it runs again with its own payload (and pauses again)", async () => {
    const h = await setUp();
    const id = await pausedJob(h);
    const resumed = await resume(h.engine, id);
    expect(resumed.status).toBe(200);
    const again = await waitFor(async () => {
      const job = await getJob(h.engine.store, id);
      return job?.status === "paused" && (job.history?.length ?? 0) === 4 ? job : undefined;
    }, "the job to pause a second time");
    expect(JSON.parse(again.payload ?? "null")).toEqual({ ok: false });
    expect(h.metrics.total("paused")).toBe(2);
  }, 30_000);

  it("a payload its kind refuses: 400 naming the field, nothing written", async () => {
    const h = await setUp();
    const id = await pausedJob(h);
    const before = await getJob(h.engine.store, id);
    const refused = await resume(h.engine, id, { payload: { ok: "yes" } });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toContain("payload.ok");
    const unknownField = await resume(h.engine, id, { payload: { ok: true }, maxAttempts: 9 });
    expect(unknownField.status).toBe(400);
    expect(await getJob(h.engine.store, id)).toEqual(before);
  }, 30_000);

  it("resuming a job that isn't paused: 409, and a missing one 404", async () => {
    const h = await setUp();
    const { job } = await h.engine.producer.enqueue({ kind: "fragile", payload: { ok: true } });
    await settled(h, job.id, "done");
    const conflict = await resume(h.engine, job.id, { payload: { ok: true } });
    expect(conflict.status).toBe(409);
    expect(JSON.stringify(conflict.body)).toContain("only paused jobs can be resumed");
    expect((await getJob(h.engine.store, job.id))?.status).toBe("done");
    expect((await resume(h.engine, "01JDOESNOTEXIST0000000000X")).status).toBe(404);
  }, 30_000);

  it("a cancel ends a paused job", async () => {
    const h = await setUp();
    const id = await pausedJob(h);
    const cancelled = await call(h.engine, {
      method: "POST",
      path: `/jobs/${id}/cancel`,
      route: "/jobs/{id}/cancel",
    });
    expect(cancelled.body).toMatchObject({ status: "cancelled", cancel: "cancelled" });
    expect((await resume(h.engine, id)).status).toBe(409);
  }, 30_000);

  it("a paused child keeps its group open; resumed, the group completes", async () => {
    const h = await setUp();
    const { group } = await h.engine.groups.create({
      children: [
        { kind: "fragile", payload: { ok: true } },
        { kind: "fragile", payload: { ok: false } },
      ],
      onComplete: { kind: "echo", payload: {} },
    });
    const paused = await waitFor(async () => {
      const page = await listJobs(h.engine.store, { queue: "default", status: "paused", limit: 10 });
      return page.items[0];
    }, "a child to pause");
    const open = await getGroup(h.engine.store, group.id);
    expect(open?.status).toBe("sealed");
    const view = await h.engine.groups.get(group.id);
    expect(view.counts).toMatchObject({ total: 2, pending: 1, done: 1 });
    expect((await resume(h.engine, paused.id, { payload: { ok: true } })).status).toBe(200);
    const finished = await waitFor(async () => {
      const g = await getGroup(h.engine.store, group.id);
      return g?.status === "succeeded" ? g : undefined;
    }, "the group to succeed");
    expect(finished.status).toBe("succeeded");
  }, 30_000);
});

/**
 * A paused job keeps its keys (issue 37 §11): its flow key's place and line, its singleton or
 * debounce key's lock, its batch key's backlog were all taken under them, so a resume's new payload
 * must give the same keys. One that gives another is refused (400 naming the key, nothing written):
 * an operator enqueues a new job for another key.
 */
describe("a paused keyed job resumed with a new payload", () => {
  it.each([
    ["fragile-flow", "flow"],
    ["fragile-singleton", "singleton"],
    ["fragile-batch", "batch"],
  ])(
    "%s: a payload giving another %s key is refused, the same key is taken",
    async (kind, what) => {
      const h = await setUp();
      const { job } = await h.engine.producer.enqueue({ kind, payload: { key: "tenant-a", ok: false } });
      await settled(h, job.id, "paused");
      const before = await getJob(h.engine.store, job.id);
      const refused = await resume(h.engine, job.id, { payload: { key: "tenant-b", ok: true } });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatchObject({ code: "validation_error" });
      const issues = (refused.body.error as { issues: { path: string; message: string }[] }).issues;
      expect(issues).toEqual([
        {
          path: "payload",
          message: expect.stringContaining(`gives ${what} key "tenant-b", but the job's is "tenant-a"`),
        },
      ]);
      expect(await getJob(h.engine.store, job.id)).toEqual(before);

      const resumed = await resume(h.engine, job.id, { payload: { key: "tenant-a", ok: true } });
      expect(resumed.status).toBe(200);
      const done = await settled(h, job.id, "done");
      expect(JSON.parse(done.result ?? "null")).toEqual({ key: "tenant-a" });
    },
    30_000,
  );
});
