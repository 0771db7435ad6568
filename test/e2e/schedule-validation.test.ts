import pLimit from "p-limit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { app } from "../../app/index.ts";
import { MAX_SCHEDULES, ScheduleInput, scheduleWrite } from "../../lib/cron/schedule.ts";
import { putSchedule } from "../../lib/store/schedule-ops.ts";
import { type LocalStack, startLocalStack } from "../../local/stack.ts";
import { stackHttp } from "../support/stack-http.ts";

/**
 * A schedule is validated like the jobs it will make: whatever POST /jobs refuses for a kind,
 * payload and queue, PUT /schedules refuses with the same answer, so no schedule is stored that
 * could only ever fail its fires.
 */
let stack: LocalStack;
beforeAll(async () => {
  stack = await startLocalStack({ app, port: 0, autoTick: false });
});
afterAll(async () => {
  await stack?.stop();
});

const { call } = stackHttp(() => stack.url);

const refusedJobs: [name: string, job: Record<string, unknown>][] = [
  ["a pool kind on a Lambda queue", { kind: "py-digest", payload: { text: "x" }, queue: "default" }],
  ["a Lambda kind on the pool queue", { kind: "echo", payload: 1, queue: "heavy" }],
  ["an unknown kind", { kind: "no-such-kind" }],
  ["an undeclared queue", { kind: "echo", queue: "nowhere" }],
  ["a payload the kind's schema refuses", { kind: "flaky", payload: { failTimes: "twice" } }],
  ["a missing payload the kind requires", { kind: "partner-call" }],
  ["an extra field the kind forbids", { kind: "partner-call", payload: { orderId: "o-1", extra: true } }],
];

describe("PUT /schedules refuses what POST /jobs refuses, with the same answer", () => {
  it.each(refusedJobs)("%s", async (_name, job) => {
    const enqueued = await call("POST", "/jobs", job);
    expect(enqueued.status).toBeGreaterThanOrEqual(400);
    expect(enqueued.status).toBeLessThan(500);
    const scheduled = await call("PUT", "/schedules/refused", { cron: "* * * * *", ...job });
    expect(scheduled.status).toBe(enqueued.status);
    expect(scheduled.body.error.code).toBe(enqueued.body.error.code);
    expect(scheduled.body.error.message).toBe(enqueued.body.error.message);
    expect((await call("GET", "/schedules")).body.items.map((s: { name: string }) => s.name)).not.toContain(
      "refused",
    );
  });

  it("accepts what POST /jobs accepts, pool kinds on their own queue included", async () => {
    const put = await call("PUT", "/schedules/digest", {
      cron: "0 0 * * *",
      kind: "py-digest",
      payload: { text: "x" },
    });
    expect(put.status).toBe(201);
    expect((await call("DELETE", "/schedules/digest")).status).toBe(204);
  });
});

describe("the number of schedules is bounded", () => {
  it(`a new schedule past ${MAX_SCHEDULES} is refused; an existing one can still be edited`, async () => {
    const now = stack.engine.clock.now();
    const write = scheduleWrite(ScheduleInput.parse({ cron: "0 0 * * *", kind: "echo" }), now);
    const limit = pLimit(16);
    // The app's declared schedules are there already; fill up to the bound.
    const before = (await call("GET", "/schedules")).body.items.length as number;
    await Promise.all(
      Array.from({ length: MAX_SCHEDULES - before }, (_, i) =>
        limit(() => putSchedule(stack.engine.store, `bulk-${i}`, write, { source: "api" }, now)),
      ),
    );
    const refused = await call("PUT", "/schedules/one-too-many", { cron: "0 0 * * *", kind: "echo" });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: "conflict" });
    expect(refused.body.error.message).toContain(`(${MAX_SCHEDULES})`);
    const edited = await call("PUT", "/schedules/bulk-7", { cron: "0 1 * * *", kind: "echo" });
    expect(edited.status).toBe(200);
    const listed = await call("GET", "/schedules");
    expect(listed.body.items).toHaveLength(MAX_SCHEDULES);
  });
});
