import { describe, expect, it } from "vitest";
import type { ClientError } from "../../lib/errors.ts";
import { replayJobs } from "../../lib/ops/replay-jobs.ts";
import { getJob, listJobs } from "../../lib/store/read-ops.ts";
import { OffsetClock } from "../support/clock.ts";
import { harnessPerTest, settled } from "../support/engine-harness.ts";

/**
 * Bulk replay (POST /jobs/replay, docs/architecture.md §21) on the real emulators: dead jobs matched
 * by kind and error text, counted by a dry run, then run again as new jobs that name their original;
 * the same request id twice replays once; a refused override or an unknown kind replays nothing.
 */
const harness = harnessPerTest();

async function deadJobs(h: Awaited<ReturnType<typeof harness.create>>, message: string, n: number) {
  const results = await h.engine.producer.enqueueBatch(
    Array.from({ length: n }, () => ({ kind: "fail", payload: { message }, maxAttempts: 1 })),
  );
  return Promise.all(results.map((r) => settled(h, r.id ?? "", "dead")));
}
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e as ClientError,
  );

describe("bulk replay", () => {
  it("replays the dead jobs a filter matches, after a dry run that counts them; originals untouched", async () => {
    const h = await harness.create({ clock: new OffsetClock() });
    h.startPoller();
    const bad = await deadJobs(h, "bad row 7", 12);
    await deadJobs(h, "partner down", 5);
    const filter = { status: "dead", kind: "fail", errorContains: "bad row" };
    const dry = await replayJobs(h.engine, { filter, dryRun: true });
    expect(dry).toMatchObject({ matched: 12, replayed: 0 });
    expect(dry.jobs.map((j) => j.from).sort()).toEqual(bad.map((j) => j.id).sort());
    expect(dry.jobs.every((j) => j.id === undefined)).toBe(true);
    const done = await replayJobs(h.engine, {
      filter,
      requestId: "fix-7",
      overrides: { payload: { message: "fixed" } },
    });
    expect(done).toMatchObject({ matched: 12, replayed: 12 });
    for (const { from, id } of done.jobs) {
      const replay = await getJob(h.engine.store, id ?? "");
      expect(replay).toMatchObject({ replayOf: from, kind: "fail" });
      expect(JSON.parse(replay?.payload ?? "null")).toEqual({ message: "fixed" });
      expect((await getJob(h.engine.store, from))?.status).toBe("dead");
    }
    // The same request again, once the replays have ended too: the same jobs, nothing new.
    for (const { id } of done.jobs) await settled(h, id ?? "", "dead");
    const again = await replayJobs(h.engine, {
      filter,
      requestId: "fix-7",
      overrides: { payload: { message: "fixed" } },
    });
    expect(again.jobs.map((j) => j.id).sort()).toEqual(done.jobs.map((j) => j.id).sort());
    const all = await listJobs(h.engine.store, { queue: "default", status: "dead", limit: 100 });
    expect(all.items.filter((j) => j.replayOf !== undefined)).toHaveLength(12);
  });

  it("replays jobs named by id: only those of the filter's status, each once; unknown ids match nothing", async () => {
    const h = await harness.create({ clock: new OffsetClock() });
    h.startPoller();
    const [a, b, c] = await deadJobs(h, "picked", 3);
    const done = await h.engine.producer.enqueue({ kind: "echo", payload: { n: 1 } });
    await settled(h, done.job.id, "done");
    const ids = [a?.id ?? "", b?.id ?? "", b?.id ?? "", done.job.id, "01ARZ3NDEKTSV4RRFFQ69G5FAV"];
    const dry = await replayJobs(h.engine, { filter: { status: "dead", ids }, dryRun: true });
    expect(dry).toEqual({ matched: 2, replayed: 0, jobs: [{ from: a?.id }, { from: b?.id }] });
    const replayed = await replayJobs(h.engine, { filter: { status: "dead", ids }, requestId: "pick-1" });
    expect(replayed).toMatchObject({ matched: 2, replayed: 2 });
    for (const { from, id } of replayed.jobs)
      expect(await getJob(h.engine.store, id ?? "")).toMatchObject({ replayOf: from, kind: "fail" });
    expect(replayed.jobs.map((j) => j.from)).not.toContain(c?.id);
    // The rest of the filter still applies; more than 100 ids is refused.
    const none = await replayJobs(h.engine, {
      filter: { status: "dead", ids, errorContains: "nothing like this" },
      dryRun: true,
    });
    expect(none).toEqual({ matched: 0, replayed: 0, jobs: [] });
    const tooMany = await refusal(
      replayJobs(h.engine, {
        filter: { status: "dead", ids: Array.from({ length: 101 }, (_, i) => `id-${i}`) },
      }),
    );
    expect(tooMany?.issues?.[0]?.path).toBe("filter.ids");
  });

  it("the same request again never replays its own replays, even when they ended matching the filter", async () => {
    const h = await harness.create({ clock: new OffsetClock() });
    h.startPoller();
    await deadJobs(h, "same error", 2);
    const request = {
      filter: { status: "dead", kind: "fail", errorContains: "same error" },
      requestId: "r-2",
    };
    const first = await replayJobs(h.engine, request);
    expect(first).toMatchObject({ matched: 2, replayed: 2 });
    // Without an override the replays die of the same error: they match the filter too.
    for (const { id } of first.jobs) await settled(h, id ?? "", "dead");
    const again = await replayJobs(h.engine, request);
    expect(again.jobs.map((j) => [j.from, j.id])).toEqual(first.jobs.map((j) => [j.from, j.id]));
    // Another request id would take all four.
    expect(await replayJobs(h.engine, { ...request, requestId: "r-3", dryRun: true })).toMatchObject({
      matched: 4,
    });
  });

  it("refuses, replaying nothing: a status alone without a limit, an override the kind refuses, an unknown kind or status", async () => {
    const h = await harness.create({ clock: new OffsetClock() });
    h.startPoller();
    await deadJobs(h, "x", 2);
    const everything = await refusal(replayJobs(h.engine, { filter: { status: "dead" } }));
    expect(everything?.issues?.[0]?.path).toBe("limit");
    const badPayload = await refusal(
      replayJobs(h.engine, {
        filter: { status: "dead", kind: "fail" },
        overrides: { payload: { message: 7 } },
      }),
    );
    expect(badPayload?.message).toBe("some replays would be refused; nothing was replayed");
    expect(badPayload?.issues?.[0]?.path).toMatch(/overrides\.payload/);
    const kind = await refusal(replayJobs(h.engine, { filter: { status: "dead", kind: "nope" } }));
    expect(kind?.issues?.[0]?.path).toBe("filter.kind");
    const status = await refusal(replayJobs(h.engine, { filter: { status: "running", kind: "fail" } }));
    expect(status?.issues?.[0]?.path).toBe("filter.status");
    expect(h.metrics.total("enqueued")).toBe(2);
    // A limit makes the whole status fine.
    expect(await replayJobs(h.engine, { filter: { status: "dead" }, limit: 1, dryRun: true })).toMatchObject({
      matched: 1,
    });
  });
});
