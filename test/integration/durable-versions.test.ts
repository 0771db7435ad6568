import { describe, expect, it } from "vitest";
import * as z from "zod";
import { createApiHandler } from "../../lib/api/routes.ts";
import { defineUnboundKind } from "../../lib/job/kind.ts";
import { runReaper } from "../../lib/ops/reaper.ts";
import { resumePausedJob } from "../../lib/producer/resume-paused.ts";
import type { JobItem } from "../../lib/store/job-item.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import { OffsetClock } from "../support/clock.ts";
import { type Harness, harnessPerTest, settled } from "../support/engine-harness.ts";
import { httpApiEvent } from "../support/lambda-events.ts";
import { waitFor } from "../support/wait.ts";

/**
 * Versions on the emulators (docs/guide/durable-jobs.md, "Versions"). A deploy is the kind's
 * `version`, `onVersionChange` and handler changed in place while a job sleeps: the registry the
 * worker runs from hands the changed kind to the job's next run, as a new deploy's would.
 */
const calls: string[] = [];
const call = (run: string, step: string) => {
  calls.push(`${run}:${step}`);
  return step;
};
let code: "old" | "branching" | "no-sleep" = "old";

const versioned = defineUnboundKind({
  name: "t-versioned",
  queue: "default",
  payload: z.object({ run: z.string() }),
  maxAttempts: 3,
  timeoutSeconds: 30,
  version: "v1",
  handler: async ({ run }, ctx) => {
    await ctx.step("a", () => call(run, "a"));
    if (code === "no-sleep") return { charged: await ctx.step("b", () => call(run, "b")) };
    // The new code asks which side of its change this job is on, before the sleep the old code had.
    const charge = code === "branching" ? await ctx.version("charge-v2", [1, 2]) : 1;
    await ctx.sleep("nap", 20 * 60);
    const charged =
      charge === 1
        ? await ctx.step("charge", () => call(run, "charge-old"))
        : await ctx.step("charge-card", () => call(run, "charge-new"));
    return { charge, charged };
  },
});

/** Its handler's body is the guide's block (docs/guide/durable-jobs.md, "Versions"; test/unit/durable-docs.test.ts). */
const docVersion = defineUnboundKind({
  name: "t-doc-version",
  queue: "default",
  payload: z.object({ user: z.string() }),
  maxAttempts: 1,
  timeoutSeconds: 30,
  handler: async ({ user }, ctx) => {
    const account = await ctx.step("create-account", async () => ({ account: `acct-${user}` }));
    if ((await ctx.version("email-check", [1, 2])) === 2)
      await ctx.step("verify-email", async () => ({ verified: account.account }));
    await ctx.sleep("cool-off", 2);
    return account;
  },
});

const harness = harnessPerTest();

async function asleep(h: Harness, id: string): Promise<JobItem> {
  return waitFor(async () => {
    const item = await getJob(h.engine.store, id);
    return item?.status === "scheduled" && item.waiting ? item : undefined;
  }, `job ${id} to sleep`);
}

async function wake(h: Harness, clock: OffsetClock): Promise<void> {
  clock.advance(20 * 60 * 1000 + 1000);
  expect((await runReaper(h.engine)).promoted).toBeGreaterThan(0);
}

async function start(): Promise<{ h: Harness; clock: OffsetClock }> {
  code = "old";
  Object.assign(versioned, { version: "v1", onVersionChange: undefined });
  const clock = new OffsetClock();
  const h = await harness.create({ clock, extraKinds: [versioned, docVersion] });
  h.startPoller();
  return { h, clock };
}

const enqueue = async (h: Harness, run: string) =>
  (await h.engine.producer.enqueue({ kind: "t-versioned", payload: { run } })).job.id;
const callsOf = (run: string) =>
  calls.filter((c) => c.startsWith(`${run}:`)).map((c) => c.slice(run.length + 1));

describe("a durable kind's versions", () => {
  it("ctx.version: a job asleep before the change finishes on its old branch, a new job takes the new one", async () => {
    const { h, clock } = await start();
    const old = `old-${Date.now()}`;
    const oldId = await enqueue(h, old);
    expect((await asleep(h, oldId)).version).toBe("v1");
    // The deploy: a new version whose handler branches on ctx.version.
    code = "branching";
    Object.assign(versioned, { version: "v2" });
    const fresh = `new-${Date.now()}`;
    const freshId = await enqueue(h, fresh);
    const freshAsleep = await asleep(h, freshId);
    expect(freshAsleep.version).toBe("v2");
    expect(freshAsleep.steps?.["charge-v2"]).toMatchObject({ op: "version", v: "2" });
    await wake(h, clock);
    const oldDone = await settled(h, oldId, "done");
    const freshDone = await settled(h, freshId, "done");
    expect(JSON.parse(oldDone.result ?? "")).toEqual({ charge: 1, charged: "charge-old" });
    expect(oldDone.steps?.["charge-v2"]).toMatchObject({ op: "version", v: "1" });
    expect(callsOf(old)).toEqual(["a", "charge-old"]);
    expect(JSON.parse(freshDone.result ?? "")).toEqual({ charge: 2, charged: "charge-new" });
    expect(callsOf(fresh)).toEqual(["a", "charge-new"]);
  });

  it('onVersionChange "pause": the job resumed under another version pauses before its handler reads a record', async () => {
    const { h, clock } = await start();
    const run = `pause-${Date.now()}`;
    const id = await enqueue(h, run);
    const before = await asleep(h, id);
    code = "no-sleep";
    Object.assign(versioned, { version: "v2", onVersionChange: "pause" });
    await wake(h, clock);
    const paused = await settled(h, id, "paused");
    expect(paused.lastError).toBe(
      `job ${id} of kind t-versioned was started by version "v1" and resumes under version "v2": its kind's onVersionChange is "pause", so the job is paused`,
    );
    expect(paused.steps).toEqual(before.steps);
    expect(paused.version).toBe("v1");
    expect(callsOf(run)).toEqual(["a"]);
    // The operator's resume accepts the new version: the job runs on under it, from its records.
    code = "old";
    await resumePausedJob(h.engine, id, {});
    const done = await settled(h, id, "done");
    expect(done.version).toBe("v2");
    expect(JSON.parse(done.result ?? "")).toEqual({ charge: 1, charged: "charge-old" });
    expect(callsOf(run)).toEqual(["a", "charge-old"]);
  });

  it('onVersionChange "restart": the journal is dropped and the job runs from the top as the new version\'s', async () => {
    const { h, clock } = await start();
    const run = `restart-${Date.now()}`;
    const id = await enqueue(h, run);
    await asleep(h, id);
    code = "no-sleep";
    Object.assign(versioned, { version: "v2", onVersionChange: "restart" });
    await wake(h, clock);
    const done = await settled(h, id, "done");
    expect(JSON.parse(done.result ?? "")).toEqual({ charged: "b" });
    expect(done.version).toBe("v2");
    expect(Object.keys(done.steps ?? {}).sort()).toEqual(["a", "b"]);
    // "a" ran again: its record went with the old journal.
    expect(callsOf(run)).toEqual(["a", "a", "b"]);
  });

  it('onVersionChange "continue" (the default) replays the old records under the new version', async () => {
    const { h, clock } = await start();
    const run = `continue-${Date.now()}`;
    const id = await enqueue(h, run);
    await asleep(h, id);
    Object.assign(versioned, { version: "v2" });
    await wake(h, clock);
    const done = await settled(h, id, "done");
    expect(JSON.parse(done.result ?? "")).toEqual({ charge: 1, charged: "charge-old" });
    expect(done.version).toBe("v1");
    expect(callsOf(run)).toEqual(["a", "charge-old"]);
  });

  it("GET /jobs?waiting=true counts suspended jobs per kind and version; other list parameters are a 400", async () => {
    const { h } = await start();
    const api = createApiHandler(h.engine);
    const get = async (query: string) => {
      const out = await api(httpApiEvent({ method: "GET", path: "/jobs", query }), {} as never);
      return { status: out.statusCode, body: JSON.parse(String(out.body)) };
    };
    expect(await get("waiting=true")).toEqual({ status: 200, body: { waiting: [], complete: true } });
    const v1 = [await enqueue(h, `count-a-${Date.now()}`), await enqueue(h, `count-b-${Date.now()}`)];
    for (const id of v1) await asleep(h, id);
    Object.assign(versioned, { version: "v2" });
    await asleep(h, await enqueue(h, `count-c-${Date.now()}`));
    // A job that is merely scheduled for later, not suspended, is not counted.
    await h.engine.producer.enqueue({ kind: "t-versioned", payload: { run: "later" }, delaySeconds: 3600 });
    const counts = {
      status: 200,
      body: {
        waiting: [
          { queue: "default", kind: "t-versioned", version: "v1", jobs: 2 },
          { queue: "default", kind: "t-versioned", version: "v2", jobs: 1 },
        ],
        complete: true,
      },
    };
    expect(await get("waiting=true")).toEqual(counts);
    expect(await get("waiting=true&queue=default")).toEqual(counts);
    const refused = await get("waiting=true&status=scheduled");
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toBe(
      "waiting=true counts suspended jobs and takes only queue, not status",
    );
    expect((await get("waiting=true&queue=nope")).status).toBe(400);
    expect((await get("waiting=yes")).status).toBe(400);
  });

  it("the guide's example: a new job takes the new step, and finishes after its sleep", async () => {
    const { h } = await start();
    const { job } = await h.engine.producer.enqueue({ kind: "t-doc-version", payload: { user: "u1" } });
    const done = await settled(h, job.id, "done");
    expect(JSON.parse(done.result ?? "")).toEqual({ account: "acct-u1" });
    expect(done.steps?.["verify-email"]).toMatchObject({ op: "step", n: 2 });
    expect(done.steps?.["cool-off"]).toMatchObject({ op: "sleep", n: 3 });
  });
});
