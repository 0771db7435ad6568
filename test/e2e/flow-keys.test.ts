import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { app } from "../../app/index.ts";
import { mostAtOnce } from "../support/overlap.ts";
import { localStackForFile } from "../support/stack-for-file.ts";
import { type Json, stackHttp } from "../support/stack-http.ts";
import { waitFor } from "../support/wait.ts";

/**
 * The flow-control demo kinds over HTTP on the local stack (docs/guide/flow-control.md): tenant-echo's
 * per-tenant concurrency (weights by tenant), tenant-rate's per-tenant rate, tenant-report's three
 * limits, and GET /keys.
 */
const stack = localStackForFile({ app });

const { call, untilStatus } = stackHttp(() => stack().url);
const done = (id: string) => untilStatus(id, "done");
async function enqueueMany(kind: string, tenant: string, n: number, sleepMs: number): Promise<string[]> {
  const jobs = Array.from({ length: n }, (_, seq) => ({ kind, payload: { tenant, seq, sleepMs } }));
  const { status, body } = await call("POST", "/jobs/batch", { jobs });
  expect(status).toBe(200);
  return body.results.map((r: Json) => r.id as string);
}
/** The most of these runs going at once, from the handler's own start and finish times. */
const peak = (results: Json[]) =>
  mostAtOnce(results.map((r) => [Date.parse(r.startedAt), Date.parse(r.finishedAt)] as const));

describe("flow control per tenant on the local stack", () => {
  it("tenant-echo: a plain tenant runs at most 2 at once, a gold- tenant at most 4; GET /keys shows a key's runs, line and limit", async () => {
    const plain = `acme-${randomUUID()}`;
    const gold = `gold-${randomUUID()}`;
    const plainIds = await enqueueMany("tenant-echo", plain, 12, 200);
    const goldIds = await enqueueMany("tenant-echo", gold, 12, 200);
    const seen = await waitFor(async () => {
      const { status, body } = await call("GET", `/keys/tenant-echo/${plain}`);
      return status === 200 && body.waiting > 0 ? body : undefined;
    }, "the plain tenant's line");
    expect(seen).toMatchObject({ kind: "tenant-echo", key: plain, concurrency: 2 });
    expect(seen.running).toBeLessThanOrEqual(2);
    const waitingJob = await waitFor(async () => {
      for (const id of plainIds) {
        const { body } = await call("GET", `/jobs/${id}`);
        if (body.waitingForKey) return body;
      }
      return undefined;
    }, "a job shown waiting for its key");
    expect(waitingJob).toMatchObject({ status: "queued", flowKey: plain, waitingForKey: true });
    const plainResults = await Promise.all(plainIds.map(async (id) => (await done(id)).result));
    const goldResults = await Promise.all(goldIds.map(async (id) => (await done(id)).result));
    // Never over the limit (how close each key comes to it depends on the workers free; the shares
    // under saturation are test/integration/flow-keys.test.ts's).
    expect(peak(plainResults)).toBeLessThanOrEqual(2);
    expect(peak(goldResults)).toBeLessThanOrEqual(4);
    expect((await call("GET", `/keys/tenant-echo/${plain}`)).status).toBe(404);
  });

  it("tenant-rate: at most 5 starts a second per tenant after a burst of 5", async () => {
    const tenant = `rate-${randomUUID()}`;
    const ids = await enqueueMany("tenant-rate", tenant, 15, 0);
    const starts = (
      await Promise.all(ids.map(async (id) => Date.parse((await done(id)).result.startedAt)))
    ).sort((a, b) => a - b);
    // 15 starts at 5 a second with a burst of 5: the last at least (15 - 5) / 5 = 2 s after the first.
    expect((starts[14] ?? 0) - (starts[0] ?? 0)).toBeGreaterThanOrEqual(1900);
    for (let i = 0; i + 10 < starts.length; i++)
      expect((starts[i + 10] ?? 0) - (starts[i] ?? 0), `starts ${i}..${i + 10}`).toBeGreaterThanOrEqual(950);
  });

  it("tenant-report: three limits at once, a tenant at most 3, a user 1; its result and GET /keys?limit=", async () => {
    const tenant = `report-${randomUUID()}`;
    const users = ["ann", "bob"].map((u) => `${u}-${randomUUID()}`);
    const jobs = Array.from({ length: 8 }, (_, n) => ({
      kind: "tenant-report",
      payload: { tenant, user: users[n % 2], tokens: 100 + n, sleepMs: 150 },
    }));
    const { status, body } = await call("POST", "/jobs/batch", { jobs });
    expect(status).toBe(200);
    const ids = body.results.map((r: Json) => r.id as string);
    const line = await waitFor(async () => {
      const view = await call("GET", `/keys/tenant-report/${users[0]}?limit=user`);
      return view.status === 200 && view.body.waiting > 0 ? view.body : undefined;
    }, "a user's line");
    expect(line).toMatchObject({
      key: users[0],
      limit: "user",
      limits: ["tenant", "user", "llm"],
      concurrency: 1,
    });
    const waiting = await call("GET", `/jobs/${ids[2]}`);
    expect(waiting.body.flowKeys).toEqual({ user: users[0], llm: "llm" });
    const results = await Promise.all(ids.map(async (id: string) => (await done(id)).result));
    const iso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
    results.forEach((r, n) => {
      expect(r).toEqual({
        tenant,
        user: users[n % 2],
        tokens: 100 + n,
        startedAt: expect.stringMatching(iso),
        finishedAt: expect.stringMatching(iso),
      });
    });
    expect(peak(results)).toBeLessThanOrEqual(3);
    for (const user of users) expect(peak(results.filter((r) => r.user === user))).toBe(1);
    const llm = await call("GET", "/keys/tenant-report/llm?limit=llm");
    expect(llm.status).toBe(404); // nothing runs or waits under it now; its rate is kept in its bucket
    const unknown = await call("GET", `/keys/tenant-report/${tenant}?limit=nope`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.message).toContain("its limits: tenant, user, llm");
    for (const tokens of [0, 10_001, 1.5]) {
      const refused = await call("POST", "/jobs", {
        kind: "tenant-report",
        payload: { tenant, user: users[0], tokens },
      });
      expect(refused.status, `tokens ${tokens}`).toBe(400);
    }
  });

  it("GET /keys: 404 for a kind without flow control or an unknown kind, 400 for a key over 256 characters", async () => {
    expect((await call("GET", "/keys/echo/x")).status).toBe(404);
    expect((await call("GET", "/keys/no-such-kind/x")).status).toBe(404);
    const long = await call("GET", `/keys/tenant-echo/${"k".repeat(257)}`);
    expect(long.status).toBe(400);
    expect(long.body.error.code).toBe("validation_error");
  });
});
