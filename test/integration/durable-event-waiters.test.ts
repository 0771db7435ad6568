import { ListObjectsV2Command } from "@aws-sdk/client-s3";
import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import pLimit from "p-limit";
import { ulid } from "ulid";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { createApiHandler } from "../../lib/api/routes.ts";
import { loadResult } from "../../lib/claims/job-bodies.ts";
import { deliverEvent } from "../../lib/durable/deliver-event.ts";
import { EventTimeoutError } from "../../lib/durable-errors.ts";
import { eventWaitersPartition } from "../../lib/job/key-layout.ts";
import { type AnyKind, defineUnboundKind } from "../../lib/job/kind.ts";
import { cancelJob } from "../../lib/ops/cancel-job.ts";
import { runReaper } from "../../lib/ops/reaper.ts";
import { encodeWaiterCursor } from "../../lib/store/cursor.ts";
import { putEventWaiter } from "../../lib/store/event-waiter-ops.ts";
import { cancel } from "../../lib/store/finalize-ops.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import { OffsetClock } from "../support/clock.ts";
import { type Harness, harnessPerTest, settled } from "../support/engine-harness.ts";
import { httpApiEvent } from "../support/lambda-events.ts";
import { deferred, waitFor } from "../support/wait.ts";

/**
 * An event's waiters (docs/architecture.md §22) on the real emulators: a waiter goes when its job
 * stops waiting, an event's data is stored once and only when a resume can win, and stale waiters,
 * however many, never keep an event from the live ones (a time budget and a continuation).
 */
const kinds: AnyKind[] = [
  defineUnboundKind({
    name: "t-paid",
    queue: "default",
    payload: z.object({ order: z.string() }),
    maxAttempts: 3,
    timeoutSeconds: 30,
    handler: async ({ order }, ctx) => {
      try {
        return {
          paid: await ctx.waitForEvent("paid", { event: "order.paid", match: order, timeoutSeconds: 600 }),
        };
      } catch (err) {
        if (err instanceof EventTimeoutError) return { timedOut: err.step };
        throw err;
      }
    },
  }),
];

/** A run of t-gated-wait stops here before its wait until the test lets it go on. */
let gate = deferred();
let atGate = deferred();

kinds.push(
  defineUnboundKind({
    name: "t-gated-wait",
    queue: "default",
    payload: z.object({ order: z.string() }),
    maxAttempts: 3,
    timeoutSeconds: 30,
    handler: async ({ order }, ctx) => {
      atGate.resolve();
      await gate.promise;
      return ctx.waitForEvent("paid", { event: "order.paid", match: order, timeoutSeconds: 600 });
    },
  }),
);

const harness = harnessPerTest();

/** The waiters stored for a pair, read straight from the table. */
async function waitersOf(h: Harness, match: string): Promise<string[]> {
  const out = await h.engine.store.doc.send(
    new QueryCommand({
      TableName: h.engine.store.table,
      KeyConditionExpression: "pk = :pk",
      ExpressionAttributeValues: { ":pk": eventWaitersPartition("order.paid", match) },
      ConsistentRead: true,
    }),
  );
  return (out.Items ?? []).map((i) => String(i.sk));
}

async function waiting(h: Harness, order: string): Promise<string> {
  const { job } = await h.engine.producer.enqueue({ kind: "t-paid", payload: { order } });
  await waitFor(
    async () => (await getJob(h.engine.store, job.id))?.waiting?.for === "event",
    `${order}'s wait`,
  );
  return job.id;
}

async function claimObjects(h: Harness): Promise<string[]> {
  const out = await h.engine.claims.s3.send(new ListObjectsV2Command({ Bucket: h.engine.claims.bucket }));
  return (out.Contents ?? []).map((o) => o.Key ?? "");
}

describe("event waiters", () => {
  it("a waiter goes when its job stops waiting: cancelled, resumed, timed out", async () => {
    const clock = new OffsetClock();
    const h = await harness.create({ clock, extraKinds: kinds });
    h.startPoller();
    const [cancelled, resumed, timedOut] = [
      await waiting(h, "o-cancel"),
      await waiting(h, "o-resume"),
      await waiting(h, "o-late"),
    ];
    expect(await waitersOf(h, "o-cancel")).toEqual([cancelled]);

    await cancelJob(h.engine, cancelled);
    expect(await waitersOf(h, "o-cancel")).toEqual([]);

    expect(await deliverEvent(h.engine, { name: "order.paid", match: "o-resume", data: 7 })).toEqual({
      resumed: 1,
    });
    expect(JSON.parse((await settled(h, resumed, "done")).result ?? "")).toEqual({ paid: 7 });
    expect(await waitersOf(h, "o-resume")).toEqual([]);

    expect(await waitersOf(h, "o-late")).toEqual([timedOut]);
    clock.advance(601_000);
    await runReaper(h.engine);
    expect(JSON.parse((await settled(h, timedOut, "done")).result ?? "")).toEqual({ timedOut: "paid" });
    expect(await waitersOf(h, "o-late")).toEqual([]);
  });

  it("a run whose suspend lost to a cancel (requested from elsewhere) takes back the pointer it wrote", async () => {
    const clock = new OffsetClock();
    const h = await harness.create({ clock, extraKinds: kinds });
    h.startPoller();
    gate = deferred();
    atGate = deferred();
    const { job } = await h.engine.producer.enqueue({ kind: "t-gated-wait", payload: { order: "o-gated" } });
    await atGate.promise;
    // Another process's cancel: the flag only (this process's run is not aborted at once).
    expect((await cancel(h.engine.store, job.id, Math.ceil(clock.now() / 1000) + 86_400)).outcome).toBe(
      "requested",
    );
    gate.resolve();
    await settled(h, job.id, "cancelled");
    expect(await waitersOf(h, "o-gated")).toEqual([]);
  });

  it("20 jobs wait on one match, 10 are cancelled, three events: the data is stored once, for the 10 resumes", async () => {
    const clock = new OffsetClock();
    const h = await harness.create({ clock, extraKinds: kinds });
    h.startPoller();
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push(await waiting(h, "o-big"));
    for (const id of ids.slice(0, 10)) await cancelJob(h.engine, id);
    const data = { note: "d".repeat(20_000) };
    const before = await claimObjects(h);
    const answers = [];
    for (let i = 0; i < 3; i++)
      answers.push(await deliverEvent(h.engine, { name: "order.paid", match: "o-big", data }));
    expect(answers).toEqual([{ resumed: 10 }, { resumed: 0 }, { resumed: 0 }]);
    for (const id of ids.slice(10)) {
      const done = await settled(h, id, "done");
      expect(JSON.parse((await loadResult(h.engine.claims, done)) ?? "")).toEqual({ paid: data });
    }
    // The jobs' own results (over 8 KiB too) aside, one object holds the event's data.
    const stored = (await claimObjects(h)).filter((k) => !before.includes(k) && !/\/result-\d+$/.test(k));
    expect(stored).toHaveLength(1);
    expect(await waitersOf(h, "o-big")).toEqual([]);
  });

  it("over 1 000 stale waiters before one live one: the live one resumes, a page a call, by continuations", async () => {
    const clock = new OffsetClock();
    const h = await harness.create({ clock, extraKinds: kinds });
    h.startPoller();
    // Stale pointers written straight through the store: their ids sort before the live job's, and
    // no job of theirs waits (none exists: ended and gone, or a crash's leftover).
    const limit = pLimit(32);
    const past = clock.now() - 86_400_000;
    const stale = Array.from({ length: 1_001 }, (_, i) => ulid(past + i));
    const expiresAt = Math.ceil(clock.now() / 1000) + 86_400;
    await Promise.all(
      stale.map((jobId) =>
        limit(() =>
          putEventWaiter(
            h.engine.store,
            "order.paid",
            "o-many",
            { jobId, queue: "default", step: "paid", lease: "an-old-run" },
            expiresAt,
          ),
        ),
      ),
    );
    const live = await waiting(h, "o-many");
    expect((await waitersOf(h, "o-many")).at(-1)).toBe(live);

    // No time left after each page (budget 0): every call looks at one page and says where to go on.
    const event = { name: "order.paid", match: "o-many", data: { ok: true } };
    let answer = await deliverEvent(h.engine, event, { budgetMs: 0 });
    let calls = 1;
    let resumed = answer.resumed;
    while (answer.continuation !== undefined && calls < 100) {
      answer = await deliverEvent(h.engine, { ...event, continuation: answer.continuation }, { budgetMs: 0 });
      resumed += answer.resumed;
      calls += 1;
    }
    expect(resumed).toBe(1);
    expect(calls).toBeGreaterThan(10);
    expect(JSON.parse((await settled(h, live, "done")).result ?? "")).toEqual({ paid: { ok: true } });
    // The stale pointers named no job that could wait again: the event took them away.
    expect(await waitersOf(h, "o-many")).toEqual([]);
  });

  it("POST /events: a continuation of another event's waiters, or none of ours, is a 400", async () => {
    const clock = new OffsetClock();
    const h = await harness.create({ clock, extraKinds: kinds });
    const api = createApiHandler(h.engine);
    const post = async (json: unknown) => {
      const out = await api(httpApiEvent({ method: "POST", path: "/events", json }), {} as never);
      return { statusCode: out.statusCode, body: String(out.body) };
    };
    const other = encodeWaiterCursor(eventWaitersPartition("order.paid", "o-2"), ulid());
    const keyed = Buffer.from(
      JSON.stringify({ key: { pk: eventWaitersPartition("order.paid", "o-1"), sk: ulid() } }),
    ).toString("base64url");
    for (const continuation of [other, keyed, "not-ours", "!!"]) {
      const out = await post({ name: "order.paid", match: "o-1", data: 1, continuation });
      expect(out.statusCode).toBe(400);
      expect(JSON.parse(out.body).error.code).toBe("validation_error");
    }
    const fine = await post({ name: "order.paid", match: "o-1", data: 1 });
    expect({ status: fine.statusCode, body: JSON.parse(fine.body) }).toEqual({
      status: 202,
      body: { resumed: 0 },
    });
  });
});
