import { describe, expect, it } from "vitest";
import { app } from "../../app/index.ts";
import { MAX_PAYLOAD_BYTES } from "../../lib/job/schemas.ts";
import { ManualClock } from "../support/clock.ts";
import { localStackForFile } from "../support/stack-for-file.ts";
import { type Json, stackHttp } from "../support/stack-http.ts";
import { waitFor } from "../support/wait.ts";

/**
 * Durable jobs on `npm start`'s stack, through HTTP only (docs/architecture.md §22): the demo kinds
 * `onboard` (a step, a sleep, a token's wait, a step) and `order-flow` (an event's wait). The stack
 * runs on a hand-moved clock: the sleep lasts until the test moves it, so "the job sleeps" is seen
 * for sure (the delayed wake-up message comes back and finds it still sleeping), never raced.
 */

const clock = new ManualClock(Date.now());
const stack = localStackForFile({ app, clock });
const { call, untilStatus } = stackHttp(() => stack().url);

async function waitingFor(id: string, what: "sleep" | "token" | "event"): Promise<Json> {
  return waitFor(async () => {
    const r = await call("GET", `/jobs/${id}`);
    return r.body.status === "scheduled" && r.body.waiting?.for === what ? r.body : undefined;
  }, `job ${id} to wait for its ${what}`);
}

/** POST to a token's url (absolute, as the job made it), with the body as given. */
async function postUrl(url: string, body: unknown): Promise<{ status: number; body: Json }> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Json) : {} };
}

const tokenStatus = async (id: string) => (await call("GET", `/tokens/${id}`)).body.status as string;

describe("durable jobs end to end", () => {
  it("`onboard`: sleeps, waits for its token, is completed through the token's url once, and ends with the approval; refusals write nothing", async () => {
    const enqueued = await call("POST", "/jobs", {
      kind: "onboard",
      payload: { user: "ada", sleepSeconds: 1 },
    });
    expect(enqueued.status).toBe(201);
    const id = enqueued.body.id as string;

    const sleeping = await waitingFor(id, "sleep");
    expect(Date.parse(sleeping.waiting.until)).toBe(Date.parse(sleeping.createdAt) + 1000);
    clock.advance(1500);
    const waiting = await waitingFor(id, "token");
    const steps = await call("GET", `/jobs/${id}/steps`);
    expect(steps.status).toBe(200);
    const approval = (steps.body.steps as Json[]).find((s) => s.name === "approval");
    const token = approval?.result as { id: string; url: string };
    expect(waiting.waiting.token).toBe(token.id);
    // The url is the stack's own API's, with the token's secret in its query.
    const url = new URL(token.url);
    expect(url.origin).toBe(new URL(stack().url).origin);
    expect(url.pathname).toBe(`/tokens/${token.id}`);
    const secret = url.searchParams.get("secret") ?? "";
    expect(secret.length).toBeGreaterThanOrEqual(32);

    // Refused, each before anything is written: the token stays pending and the job waits.
    const bare = `${url.origin}${url.pathname}`;
    const missing = await postUrl(bare, { data: { approved: true } });
    expect(missing.status).toBe(403);
    expect(missing.body.error.code).toBe("forbidden");
    expect((await postUrl(`${bare}?secret=${secret.slice(1)}x`, { data: {} })).status).toBe(403);
    const unknown = await postUrl(`${url.origin}/tokens/tok_${"0".repeat(26)}?secret=${secret}`, {
      data: {},
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe("not_found");
    const big = await postUrl(token.url, { data: "x".repeat(MAX_PAYLOAD_BYTES + 1) });
    expect(big.status).toBe(413);
    expect(big.body.error.code).toBe("payload_too_large");
    const badShape = await postUrl(token.url, { approved: true });
    expect(badShape.status).toBe(400);
    expect(await tokenStatus(token.id)).toBe("pending");
    expect((await call("GET", `/jobs/${id}`)).body.waiting).toMatchObject({ for: "token", token: token.id });

    const data = { approved: true, by: "grace" };
    const done = await postUrl(token.url, { data });
    expect(done.status).toBe(200);
    expect(done.body).toEqual({ id: token.id, jobId: id, status: "completed", resumed: true });
    const again = await postUrl(token.url, { data: { approved: false } });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("conflict");

    const finished = await untilStatus(id, "done");
    expect(finished.result).toMatchObject({ user: "ada", account: "acct-ada", approval: data });
    const tokenView = await call("GET", `/tokens/${token.id}`);
    expect(tokenView.body).toMatchObject({ id: token.id, jobId: id, status: "completed", data });
    expect(tokenView.body).not.toHaveProperty("secret");
    const recorded = (await call("GET", `/jobs/${id}/steps`)).body;
    expect(recorded.status).toBe("done");
    expect((recorded.steps as Json[]).map((s) => s.name)).toEqual([
      "create-account",
      "cool-off",
      "approval",
      "send-welcome",
    ]);
  });

  it("POST /events: a name or match left out is a 400 naming it; `order-flow` resumes with the event's data", async () => {
    for (const [body, field] of [
      [{ match: "o-1", data: {} }, "name"],
      [{ name: "order.paid", data: {} }, "match"],
    ] as const) {
      const r = await call("POST", "/events", body);
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe("validation_error");
      expect((r.body.error.issues as Json[]).map((i) => i.path)).toContain(field);
    }

    const enqueued = await call("POST", "/jobs", { kind: "order-flow", payload: { order: "o-77" } });
    expect(enqueued.status).toBe(201);
    const id = enqueued.body.id as string;
    const waiting = await waitingFor(id, "event");
    expect(waiting.waiting).toMatchObject({ for: "event", event: "order.paid", match: "o-77" });
    // Another order's event resumes no one.
    const other = await call("POST", "/events", { name: "order.paid", match: "o-78", data: {} });
    expect(other).toEqual({ status: 202, body: { resumed: 0 } });

    const data = { amount: 4200, currency: "EUR" };
    const delivered = await call("POST", "/events", { name: "order.paid", match: "o-77", data });
    expect(delivered).toEqual({ status: 202, body: { resumed: 1 } });
    const finished = await untilStatus(id, "done");
    expect(finished.result).toEqual({ order: "o-77", paid: data });
  });
});
