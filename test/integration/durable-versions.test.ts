import { describe, expect, it } from "vitest";
import * as z from "zod";
import { defineUnboundKind } from "../../lib/job/kind.ts";
import { runReaper } from "../../lib/ops/reaper.ts";
import type { JobItem } from "../../lib/store/job-item.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import { OffsetClock } from "../support/clock.ts";
import { type Harness, harnessPerTest, settled } from "../support/engine-harness.ts";
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
  const h = await harness.create({ clock, extraKinds: [versioned] });
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
});
