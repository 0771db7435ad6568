import { describe, expect, it } from "vitest";
import { app } from "../../app/index.ts";
import { aroundSqsRequests, localStackForFile } from "../support/stack-for-file.ts";
import { type Json, stackHttp } from "../support/stack-http.ts";
import { waitFor } from "../support/wait.ts";

/**
 * Pause, resume and concurrency on the whole local stack, in process and through HTTP. The SQS
 * client is instrumented to count the pollers' ReceiveMessage calls, so "the pollers have stopped
 * receiving" is an observed event, not a guess about time.
 */

/** The pollers' ReceiveMessage calls: in flight now (by start number), the most seen at once, all started. */
const receives = { inFlight: new Set<number>(), peak: 0, started: 0 };
/** True once every receive that started before `mark` (a `receives.started` value) has returned. */
const settledSince = (mark: number) => [...receives.inFlight].every((n) => n > mark);

const stack = localStackForFile({
  app,
  instrument: aroundSqsRequests("countReceives", async (request, send) => {
    // The default queue's receives only: the other queues' pollers are not paused.
    const url = (request.input as { QueueUrl?: string }).QueueUrl ?? "";
    if (request.command !== "ReceiveMessageCommand" || !/skyforge-default$/.test(url)) return send();
    receives.started += 1;
    const n = receives.started;
    receives.inFlight.add(n);
    receives.peak = Math.max(receives.peak, receives.inFlight.size);
    try {
      return await send();
    } finally {
      receives.inFlight.delete(n);
    }
  }),
});

const { call } = stackHttp(() => stack().url);

async function defaultQueue(): Promise<Json> {
  const r = await call("GET", "/queues");
  expect(r.status).toBe(200);
  const q = (r.body.items as Json[]).find((i) => i.name === "default");
  expect(q).toBeDefined();
  return q as Json;
}

async function enqueueEcho(n: number, tag: string): Promise<string[]> {
  const r = await call("POST", "/jobs/batch", {
    jobs: Array.from({ length: n }, (_, i) => ({ kind: "echo", payload: { tag, i } })),
  });
  expect(r.status).toBe(200);
  const ids = (r.body.results as Json[]).map((x) => x.id as string);
  expect(ids.every((id) => typeof id === "string")).toBe(true);
  return ids;
}

const statuses = (ids: string[]) =>
  Promise.all(ids.map(async (id) => (await call("GET", `/jobs/${id}`)).body));

const allDone = (ids: string[], timeoutMs = 10_000) =>
  waitFor(
    async () => {
      const jobs = await statuses(ids);
      return jobs.every((j) => j.status === "done") ? jobs : undefined;
    },
    `${ids.length} jobs to be done`,
    timeoutMs,
    100,
  );

describe("pause and resume on the local stack", () => {
  it("holds a paused queue's jobs in SQS untouched, then runs each exactly once on resume", async () => {
    const paused = await call("POST", "/queues/default/pause");
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({ name: "default", paused: true });
    expect(paused.body.eventSource).toMatchObject({ enabled: false, state: "local" });

    // Enqueued at once: a poller still in its last long poll may receive some, and must hand them back.
    const ids = await enqueueEcho(20, "paused");

    // Every poller loop has come back from its last receive and parked.
    await waitFor(async () => receives.inFlight.size === 0, "the pollers to stop receiving", 5_000, 20);
    const receivesWhenParked = receives.started;

    // All 20 sit visible in SQS, and stay so over several looks.
    let stableLooks = 0;
    await waitFor(
      async () => {
        const q = await defaultQueue();
        const held = q.counts.visible === 20 && q.counts.inFlight === 0 && q.counts.delayed === 0;
        stableLooks = held ? stableLooks + 1 : 0;
        return stableLooks >= 3;
      },
      "20 messages visible in SQS across three looks",
      5_000,
      100,
    );

    expect(receives.started).toBe(receivesWhenParked);
    expect(receives.inFlight.size).toBe(0);
    const jobs = await statuses(ids);
    expect(jobs.map((j) => j.status)).toEqual(ids.map(() => "queued"));
    expect(jobs.every((j) => j.attempts === 0)).toBe(true);
    expect(stack().metrics.total("started")).toBe(0);
    const q = await defaultQueue();
    expect(q).toMatchObject({ paused: true, counts: { dlq: 0 } });

    const resumed = await call("POST", "/queues/default/resume");
    expect(resumed.status).toBe(200);
    expect(resumed.body).toMatchObject({ paused: false, eventSource: { enabled: true } });

    const done = await allDone(ids);
    expect(done.map((j) => j.attempts)).toEqual(ids.map(() => 1));
    expect(done.map((j) => j.result)).toEqual(ids.map((_, i) => ({ tag: "paused", i })));
    expect(stack().metrics.total("started")).toBe(20);
    expect(stack().metrics.total("succeeded")).toBe(20);
    expect(stack().metrics.total("duplicateDeliveries")).toBe(0);
    await waitFor(
      async () => {
        const after = await defaultQueue();
        return after.counts.visible + after.counts.inFlight + after.counts.delayed === 0 ? after : undefined;
      },
      "the queue to drain",
      5_000,
      100,
    );
    expect((await defaultQueue()).counts.dlq).toBe(0);
  });

  it("changes the pollers' concurrency with PATCH and keeps running jobs", async () => {
    const startedBefore = stack().metrics.total("started");
    const patched = await call("PATCH", "/queues/default", { maxConcurrency: 3 });
    expect(patched.status).toBe(200);
    // Counted once the PATCH is in force: a loop above the new concurrency may still have begun a
    // receive while the request was on its way (a loaded CI saw 10), never after its answer.
    const afterPatch = receives.started;
    expect(patched.body).toMatchObject({ maxConcurrency: 3, eventSource: { maxConcurrency: 3 } });
    const q = await defaultQueue();
    expect(q).toMatchObject({
      paused: false,
      maxConcurrency: 3,
      declared: { maxConcurrency: 10 },
      eventSource: { enabled: true, maxConcurrency: 3, state: "local" },
    });

    // The loops above the new concurrency end after their current receive.
    await waitFor(
      async () => settledSince(afterPatch),
      "the receives begun before the PATCH's answer",
      30_000,
      20,
    );
    expect(receives.inFlight.size).toBeLessThanOrEqual(3);
    receives.peak = receives.inFlight.size;

    const ids = await enqueueEcho(15, "narrow");
    const done = await allDone(ids);
    expect(done.map((j) => j.attempts)).toEqual(ids.map(() => 1));
    expect(stack().metrics.total("started") - startedBefore).toBe(15);
    expect(receives.peak).toBeLessThanOrEqual(3);
    expect((await defaultQueue()).counts.dlq).toBe(0);
  });
});
