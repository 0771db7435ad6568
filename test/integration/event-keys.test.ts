import { describe, expect, it } from "vitest";
import * as z from "zod";
import { createApiHandler } from "../../lib/api/routes.ts";
import { defineUnboundKind } from "../../lib/job/kind.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import { OffsetClock } from "../support/clock.ts";
import { type Harness, harnessPerTest, settled } from "../support/engine-harness.ts";
import { httpApiEvent } from "../support/lambda-events.ts";
import { waitFor } from "../support/wait.ts";

/**
 * An event wait's key comes from the job's own data (the demo's `order-flow` waits for its order's
 * `order.paid`), so the store's limits on it are met inside a run, not at enqueue (issue 37 §5): a
 * match the table can't hold as a key (a lone surrogate, or a waiters' partition key over 2 048 bytes
 * once URI-encoded) ends its job dead at once with an error that says why, where it used to fail
 * every delivery until its attempts ran out. POST /events refuses the same name or match with a 400.
 */
const harness = harnessPerTest();

const order = defineUnboundKind({
  name: "t-order-key",
  queue: "default",
  payload: z.object({ order: z.string() }),
  maxAttempts: 3,
  timeoutSeconds: 30,
  handler: async ({ order }, ctx) => ({
    order,
    paid: await ctx.waitForEvent("paid", { event: "order.paid", match: order, timeoutSeconds: 600 }),
  }),
});

async function setUp(): Promise<Harness> {
  const h = await harness.create({
    clock: new OffsetClock(),
    queue: { backoff: { baseSeconds: 1, maxSeconds: 1 } },
    extraKinds: [order],
  });
  h.startPoller();
  return h;
}

describe("an event wait whose match the store can't hold as a key", () => {
  it.each([
    ["a lone surrogate", "o-\uD800", /waitForEvent "paid": its match contains a lone surrogate/],
    [
      "226 CJK characters (2 049 bytes once URI-encoded)",
      "中".repeat(226),
      /waitForEvent "paid": the key of its event and match takes 2049 bytes .* over DynamoDB's 2048-byte partition key limit/,
    ],
  ])("%s: dead on its first attempt, saying why", async (_, match, why) => {
    const h = await setUp();
    const { job } = await h.engine.producer.enqueue({ kind: "t-order-key", payload: { order: match } });
    const dead = await settled(h, job.id, "dead");
    expect(dead.attempts).toBe(1);
    expect(dead.lastError).toMatch(why);
    expect(dead.waiting).toBeUndefined();
  });

  it("the longest match that fits (225 CJK characters) waits, and its event resumes it", async () => {
    const h = await setUp();
    const match = "中".repeat(225);
    const { job } = await h.engine.producer.enqueue({ kind: "t-order-key", payload: { order: match } });
    await waitFor(async () => (await getJob(h.engine.store, job.id))?.waiting?.for === "event", "the wait");
    const api = createApiHandler(h.engine);
    const sent = await api(
      httpApiEvent({
        method: "POST",
        path: "/events",
        route: "/events",
        json: { name: "order.paid", match, data: 7 },
      }),
      {} as never,
    );
    expect(sent.statusCode).toBe(202);
    const done = await settled(h, job.id, "done");
    expect(JSON.parse(done.result ?? "null")).toEqual({ order: match, paid: 7 });
  });

  it("POST /events with such a name or match: 400 naming the field, over HTTP", async () => {
    const h = await setUp();
    const api = createApiHandler(h.engine);
    const send = async (json: unknown) => {
      const res = await api(
        httpApiEvent({ method: "POST", path: "/events", route: "/events", json }),
        {} as never,
      );
      return { status: res.statusCode, body: JSON.parse(String(res.body)) };
    };
    const lone = await send({ name: "order.\uDC00", match: "o-1" });
    expect(lone.status).toBe(400);
    expect(lone.body.error.issues).toEqual([
      { path: "name", message: expect.stringContaining("lone surrogate") },
    ]);
    const long = await send({ name: "order.paid", match: "中".repeat(226) });
    expect(long.status).toBe(400);
    expect(long.body.error.issues).toEqual([
      { path: "(root)", message: expect.stringMatching(/^the key of its name and match takes 2049 bytes/) },
    ]);
  });
});
