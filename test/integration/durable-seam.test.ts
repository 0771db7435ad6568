import { describe, expect, it } from "vitest";
import * as z from "zod";
import { createApiHandler } from "../../lib/api/routes.ts";
import { tokenCallbackHandler } from "../../lib/handlers/token-callback.ts";
import type { WaitToken } from "../../lib/job/durable.ts";
import { defineUnboundKind } from "../../lib/job/kind.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import { OffsetClock } from "../support/clock.ts";
import { harnessPerTest, settled } from "../support/engine-harness.ts";
import { httpApiEvent } from "../support/lambda-events.ts";
import { waitFor } from "../support/wait.ts";

/**
 * Durable steps' seam (docs/architecture.md §2, §22): the delivery pipeline, the API and the token
 * callback reach durable execution only through the engine's `durable` service, one named call per
 * stage. Each of its methods is wrapped on the engine the worker and the routes were built on, so a
 * stage that reached a durable file directly would be missing from the calls seen.
 */
const kinds = [
  defineUnboundKind({
    name: "t-seam",
    queue: "default",
    payload: z.object({ order: z.string() }),
    maxAttempts: 3,
    timeoutSeconds: 30,
    handler: async ({ order }, ctx) => {
      const token = await ctx.createToken("approval", { timeoutSeconds: 600 });
      const approved = await ctx.waitForToken(token);
      const paid = await ctx.waitForEvent("paid", { event: "order.paid", match: order, timeoutSeconds: 600 });
      return { approved, paid };
    },
  }),
];

const harness = harnessPerTest();

/** Wraps each method of `service` in place; the names called, in order. */
function callsTo(service: object): string[] {
  const calls: string[] = [];
  const target = service as Record<string, unknown>;
  for (const name of Object.getOwnPropertyNames(Object.getPrototypeOf(service))) {
    const method = target[name];
    if (name === "constructor" || typeof method !== "function") continue;
    target[name] = (...args: unknown[]) => {
      calls.push(name);
      return method.apply(service, args);
    };
  }
  return calls;
}

describe("the durable seam", () => {
  it("a run, its suspends, a token's completion, an event and the steps' view each go through engine.durable", async () => {
    const h = await harness.create({ clock: new OffsetClock(), extraKinds: kinds });
    const calls = callsTo(h.engine.durable);
    const api = createApiHandler(h.engine);
    const callback = tokenCallbackHandler(h.engine);
    h.startPoller();
    const { job } = await h.engine.producer.enqueue({ kind: "t-seam", payload: { order: "o-seam" } });
    const waitsFor = (what: string) =>
      waitFor(async () => (await getJob(h.engine.store, job.id))?.waiting?.for === what, `its ${what} wait`);

    await waitsFor("token");
    expect(calls).toEqual(["openRun", "beforeSuspend", "afterSuspend"]);
    const token = (await getJob(h.engine.store, job.id))?.steps?.approval?.v;
    const { id, url } = JSON.parse(token ?? "{}") as WaitToken;
    const secret = new URL(url, "http://x").searchParams.get("secret") ?? "";
    const completed = await callback(
      httpApiEvent({
        method: "POST",
        path: `/tokens/${id}`,
        query: `secret=${secret}`,
        json: { data: true },
      }),
      {} as never,
    );
    expect(completed.statusCode).toBe(200);

    await waitsFor("event");
    const event = httpApiEvent({
      method: "POST",
      path: "/events",
      json: { name: "order.paid", match: "o-seam", data: 5 },
    });
    expect((await api(event, {} as never)).statusCode).toBe(202);
    expect(JSON.parse((await settled(h, job.id, "done")).result ?? "")).toEqual({ approved: true, paid: 5 });

    const steps = await api(httpApiEvent({ method: "GET", path: `/jobs/${job.id}/steps` }), {} as never);
    expect(steps.statusCode).toBe(200);
    const view = await api(httpApiEvent({ method: "GET", path: `/tokens/${id}` }), {} as never);
    expect(view.statusCode).toBe(200);
    expect(calls).toEqual([
      ...["openRun", "beforeSuspend", "afterSuspend"],
      "completeToken",
      ...["openRun", "beforeSuspend", "afterSuspend"],
      "deliverEvent",
      "openRun",
      "stepsOf",
      "tokenView",
    ]);
  });
});
