import { describe, expect, it } from "vitest";
import * as z from "zod";
import { loadPayload } from "../../lib/claims/job-bodies.ts";
import type { ClientError } from "../../lib/errors.ts";
import { MAX_REPLAY } from "../../lib/job/replay-schemas.ts";
import { replayJobs } from "../../lib/ops/replay-jobs.ts";
import { getJob, listJobs } from "../../lib/store/read-ops.ts";
import { OffsetClock } from "../support/clock.ts";
import { harnessPerTest, settled } from "../support/engine-harness.ts";
import { kindOnDefaultQueue } from "../support/test-kinds.ts";

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
    const everything = await refusal(replayJobs(h.engine, { filter: { status: "dead" }, requestId: "all" }));
    expect(everything?.issues?.[0]?.path).toBe("limit");
    const badPayload = await refusal(
      replayJobs(h.engine, {
        filter: { status: "dead", kind: "fail" },
        overrides: { payload: { message: 7 } },
        requestId: "bad-payload",
      }),
    );
    expect(badPayload?.message).toBe("some replays would be refused; nothing was replayed");
    expect(badPayload?.issues?.[0]?.path).toMatch(/overrides\.payload/);
    const kind = await refusal(
      replayJobs(h.engine, { filter: { status: "dead", kind: "nope" }, dryRun: true }),
    );
    expect(kind?.issues?.[0]?.path).toBe("filter.kind");
    const status = await refusal(
      replayJobs(h.engine, { filter: { status: "running", kind: "fail" }, dryRun: true }),
    );
    expect(status?.issues?.[0]?.path).toBe("filter.status");
    expect(h.metrics.total("enqueued")).toBe(2);
    // A limit makes the whole status fine.
    expect(await replayJobs(h.engine, { filter: { status: "dead" }, limit: 1, dryRun: true })).toMatchObject({
      matched: 1,
    });
  });
});

/**
 * One request does bounded work (issue 37 §8): at most MAX_REPLAY (500) jobs and a few pages of
 * listing, then a cursor to go on from; and a request that enqueues names itself (`requestId`), so
 * a retry after a timeout replays nothing twice.
 */
describe("bulk replay, a bounded request at a time", () => {
  it("a replay that enqueues needs a requestId (a dry run doesn't); nothing is replayed without one", async () => {
    const h = await harness.create({ clock: new OffsetClock() });
    h.startPoller();
    await deadJobs(h, "needs an id", 2);
    const filter = { status: "dead", kind: "fail", errorContains: "needs an id" };
    const refused = await refusal(replayJobs(h.engine, { filter }));
    expect(refused?.code).toBe("validation_error");
    expect(refused?.issues?.map((i) => i.path)).toEqual(["requestId"]);
    expect(h.metrics.total("enqueued")).toBe(2);
    expect(await replayJobs(h.engine, { filter, dryRun: true })).toMatchObject({ matched: 2, replayed: 0 });
  });

  it(`takes at most ${MAX_REPLAY} jobs a request: a larger limit is refused`, async () => {
    const h = await harness.create({ clock: new OffsetClock() });
    expect(MAX_REPLAY).toBe(500);
    const over = await refusal(
      replayJobs(h.engine, { filter: { status: "dead", kind: "fail" }, limit: MAX_REPLAY + 1, dryRun: true }),
    );
    expect(over?.issues?.map((i) => i.path)).toEqual(["limit"]);
    expect(
      await replayJobs(h.engine, { filter: { status: "dead" }, limit: MAX_REPLAY, dryRun: true }),
    ).toEqual({
      matched: 0,
      replayed: 0,
      jobs: [],
    });
  });

  it("answers a cursor while more may match: followed to the end, every match is replayed once", async () => {
    const h = await harness.create({ clock: new OffsetClock() });
    h.startPoller();
    const dead = await deadJobs(h, "walk me", 12);
    const filter = { status: "dead", kind: "fail", errorContains: "walk me" };
    const walk = async (request: Record<string, unknown>) => {
      const answers = [];
      let cursor: string | undefined;
      do {
        const answer = await replayJobs(h.engine, { ...request, ...(cursor ? { cursor } : {}) });
        answers.push(answer);
        cursor = answer.cursor;
      } while (cursor && answers.length < 20);
      return answers;
    };
    const dry = await walk({ filter, limit: 5, dryRun: true });
    expect(dry.map((a) => a.matched)).toEqual([5, 5, 2]);
    expect(dry.flatMap((a) => a.jobs.map((j) => j.from)).sort()).toEqual(dead.map((j) => j.id).sort());
    const real = await walk({ filter, limit: 5, requestId: "walk-1" });
    expect(real.map((a) => a.replayed)).toEqual([5, 5, 2]);
    const pairs = real.flatMap((a) => a.jobs);
    expect(pairs.map((j) => j.from).sort()).toEqual(dead.map((j) => j.id).sort());
    expect(new Set(pairs.map((j) => j.id)).size).toBe(12);
    for (const { from, id } of pairs)
      expect(await getJob(h.engine.store, id ?? "")).toMatchObject({ replayOf: from });
  });

  it("reads a bounded number of list pages a request: with few matches among many jobs, it answers a cursor and goes on from it", async () => {
    const h = await harness.create({ clock: new OffsetClock() });
    h.startPoller();
    // Interleaved in the index: a third of the dead jobs match.
    const wanted: string[] = [];
    for (let round = 0; round < 4; round++) {
      wanted.push(...(await deadJobs(h, "needle", 1)).map((j) => j.id));
      await deadJobs(h, "hay", 2);
    }
    const filter = { status: "dead", kind: "fail", errorContains: "needle" };
    // A limit of 2 reads pages of at most 2; a budget of 2 list calls reads at most 4 jobs a request.
    const found: string[] = [];
    let cursor: string | undefined;
    let requests = 0;
    do {
      const answer = await replayJobs(
        h.engine,
        { filter, limit: 2, dryRun: true, ...(cursor ? { cursor } : {}) },
        { listCalls: 2 },
      );
      found.push(...answer.jobs.map((j) => j.from));
      cursor = answer.cursor;
      requests += 1;
    } while (cursor && requests < 20);
    expect(found.sort()).toEqual([...wanted].sort());
    // 12 jobs read 4 at a time at most: at least 3 requests, each bounded.
    expect(requests).toBeGreaterThanOrEqual(3);
  });

  it("a payload over 8 KiB is not held from its check to its enqueue: read again, the replay carries it whole", async () => {
    const bigFail = kindOnDefaultQueue(
      "t-fail-big",
      { maxAttempts: 1, timeoutSeconds: 30, payload: z.object({ pad: z.string() }) },
      async () => {
        throw new Error("the big one failed");
      },
    );
    const h = await harness.create({ clock: new OffsetClock(), extraKinds: [bigFail] });
    h.startPoller();
    const pad = "é".repeat(30_000); // 60 KB of JSON: kept in the claims bucket
    const { job } = await h.engine.producer.enqueue({ kind: "t-fail-big", payload: { pad } });
    await settled(h, job.id, "dead");
    const answer = await replayJobs(h.engine, {
      filter: { status: "dead", kind: "t-fail-big" },
      requestId: "big-1",
    });
    expect(answer).toMatchObject({ matched: 1, replayed: 1 });
    const replay = await getJob(h.engine.store, answer.jobs[0]?.id ?? "");
    expect(replay?.payloadObject).toBeDefined();
    const json = replay ? await loadPayload(h.engine.store, h.engine.claims, replay) : undefined;
    expect(JSON.parse(json ?? "null")).toEqual({ pad });
  });

  it("refuses a cursor it didn't hand out, and a cursor beside filter.ids", async () => {
    const h = await harness.create({ clock: new OffsetClock() });
    const filter = { status: "dead", kind: "fail" };
    for (const cursor of ["nope!", Buffer.from('{"q":"another-queue"}').toString("base64url")]) {
      const refused = await refusal(replayJobs(h.engine, { filter, cursor, dryRun: true }));
      expect(refused?.code, cursor).toBe("validation_error");
      expect(refused?.issues?.[0]?.path, cursor).toBe("cursor");
    }
    const withIds = await refusal(
      replayJobs(h.engine, {
        filter: { ...filter, ids: ["01ARZ3NDEKTSV4RRFFQ69G5FAV"] },
        cursor: "abc",
        dryRun: true,
      }),
    );
    expect(withIds?.issues?.[0]?.path).toBe("cursor");
  });
});
