import { PutCommand, ScanCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, test, vi } from "vitest";
import * as z from "zod";
import { systemClock } from "../../lib/clock.ts";
import { ClientError } from "../../lib/errors.ts";
import { defineUnboundKind } from "../../lib/job/kind.ts";
import { replayJobs } from "../../lib/ops/replay-jobs.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import { searchJobs } from "../../lib/store/search-ops.ts";
import { JOBS_PER_ENTRY } from "../../lib/store/tag-entries.ts";
import { harnessPerTest, settled } from "../support/engine-harness.ts";

/**
 * Tags (docs/guide/finding-runs.md): what a job's tags pass on to the jobs it makes, and what a
 * refused tag list leaves behind (nothing).
 */

/** A tagged job's run: a group of two children (one with tags of its own) and two follow-ups (one with its own). */
const spawner = defineUnboundKind({
  name: "test-tags-spawner",
  queue: "default",
  payload: z.object({}),
  maxAttempts: 1,
  timeoutSeconds: 60,
  handler: async (_payload, ctx) => {
    const group = await ctx.group({
      children: [
        { kind: "echo", payload: "inherits" },
        { kind: "echo", payload: "own", tags: ["child-own"] },
      ],
      onComplete: { kind: "echo", payload: "completion" },
    });
    const inherited = await ctx.enqueue("echo", "follow-up", { step: "inherits" });
    const own = await ctx.enqueue("echo", "follow-up", { step: "own", tags: ["follow-own"] });
    return { group: group.id, inherited: inherited.job.id, own: own.job.id };
  },
});

/** A lean kind: no item at enqueue, so its item is built from its message at its claim. */
const lean = defineUnboundKind({
  name: "test-tags-lean",
  queue: "default",
  lane: "lean",
  payload: z.json(),
  maxAttempts: 1,
  timeoutSeconds: 60,
  handler: async (payload) => payload,
});

/** A durable job that invokes one echo child and returns what it answered. */
const invoker = defineUnboundKind({
  name: "test-tags-invoker",
  queue: "default",
  payload: z.object({}),
  maxAttempts: 1,
  timeoutSeconds: 60,
  handler: async (_payload, ctx) => ({
    child: await ctx.invoke("echo", "from the parent", { name: "child" }),
  }),
});

const harness = harnessPerTest();

describe("tags", () => {
  test("follow-ups and group children carry their parent's tags unless given their own; all are found by the tag", async () => {
    const h = await harness.create({ clock: systemClock, extraKinds: [spawner] });
    const { job } = await h.engine.producer.enqueue({
      kind: "test-tags-spawner",
      payload: {},
      tags: ["order-42", "tenant:acme", "order-42"],
    });
    expect(job.tags).toEqual(["order-42", "tenant:acme"]);
    const poller = h.startPoller();
    const done = await settled(h, job.id, "done");
    const made = JSON.parse(done.result ?? "{}") as { inherited: string; own: string };
    await settled(h, made.inherited, "done");
    await settled(h, made.own, "done");
    const found = await searchJobs(h.engine.store, { tag: "tenant:acme" }, { limit: 100 });
    await poller.stop();
    expect((await getJob(h.engine.store, made.inherited))?.tags).toEqual(["order-42", "tenant:acme"]);
    expect((await getJob(h.engine.store, made.own))?.tags).toEqual(["follow-own"]);
    // The parent, its inheriting follow-up and its inheriting child; newest first.
    const ids = found.items.map((j) => j.id);
    expect(ids).toContain(job.id);
    expect(ids).toContain(made.inherited);
    expect(ids).not.toContain(made.own);
    const children = found.items.filter((j) => j.member !== undefined);
    expect(children.map((c) => JSON.parse(c.payload ?? "null"))).toEqual(["inherits"]);
    const places = found.items.map((j) => `${String(j.createdAt).padStart(15, "0")}#${j.id}`);
    expect(places).toEqual([...places].sort().reverse());
    const own = await searchJobs(h.engine.store, { tag: "child-own" }, { limit: 10 });
    expect(own.items.map((j) => JSON.parse(j.payload ?? "null"))).toEqual(["own"]);
  });

  test("a replay carries its job's tags, or the overrides' own; a lean job's tags come from its message", async () => {
    const h = await harness.create({ clock: systemClock, extraKinds: [lean] });
    const { job } = await h.engine.producer.enqueue({
      kind: "fail",
      payload: { message: "tagged failure" },
      maxAttempts: 1,
      tags: ["replay-me"],
    });
    const leanJob = (await h.engine.producer.enqueue({ kind: "test-tags-lean", payload: 1, tags: ["lean"] }))
      .job;
    expect(await getJob(h.engine.store, leanJob.id)).toBeUndefined();
    const poller = h.startPoller();
    await settled(h, job.id, "dead");
    expect((await settled(h, leanJob.id, "done")).tags).toEqual(["lean"]);
    const same = await replayJobs(h.engine, { filter: { status: "dead", ids: [job.id] }, requestId: "same" });
    const other = await replayJobs(h.engine, {
      filter: { status: "dead", ids: [job.id] },
      requestId: "other",
      overrides: { tags: ["replayed"] },
    });
    await poller.stop();
    expect((await getJob(h.engine.store, same.jobs[0]?.id ?? ""))?.tags).toEqual(["replay-me"]);
    expect((await getJob(h.engine.store, other.jobs[0]?.id ?? ""))?.tags).toEqual(["replayed"]);
    const found = await searchJobs(h.engine.store, { tag: "replay-me" }, { limit: 10 });
    expect(found.items.map((j) => j.id)).toEqual([same.jobs[0]?.id, job.id]);
  });

  test("a durable job's child (ctx.invoke) carries its parent's tags", async () => {
    const h = await harness.create({ clock: systemClock, extraKinds: [invoker] });
    const { job } = await h.engine.producer.enqueue({
      kind: "test-tags-invoker",
      payload: {},
      tags: ["saga-7"],
    });
    const poller = h.startPoller();
    const done = await settled(h, job.id, "done");
    const found = await searchJobs(h.engine.store, { tag: "saga-7" }, { limit: 10 });
    await poller.stop();
    expect(JSON.parse(done.result ?? "{}")).toEqual({ child: "from the parent" });
    const [child, parent] = found.items;
    expect(found.items).toHaveLength(2);
    expect(parent?.id).toBe(job.id);
    expect(child).toMatchObject({ kind: "echo", parent: { j: job.id }, tags: ["saga-7"] });
  });

  test("a batch's jobs that share a tag share its entries: 100 jobs, 7 entries; each job found once, newest first", async () => {
    const h = await harness.create({ clock: systemClock });
    const results = await h.engine.producer.enqueueBatch(
      Array.from({ length: 100 }, (_, i) => ({
        kind: "echo",
        payload: i,
        tags: i % 10 === 0 ? ["import-42", "tenth"] : ["import-42"],
      })),
    );
    const ids = results.map((r) => r.id as string);
    const items = await h.engine.store.doc.send(new ScanCommand({ TableName: h.engine.store.table }));
    const entries = (items.Items ?? []).filter((i) => String(i.pk).startsWith("tag#"));
    // 100 for import-42 in entries of JOBS_PER_ENTRY (16), and one of the ten tagged `tenth`.
    expect(entries).toHaveLength(Math.ceil(100 / JOBS_PER_ENTRY) + 1);
    const jobs = await h.engine.store.doc.send(new ScanCommand({ TableName: h.engine.store.table }));
    const created = new Map((jobs.Items ?? []).filter((i) => i.sk === "job").map((i) => [i.id, i.createdAt]));
    const newest = [...ids].sort(
      (a, b) => Number(created.get(b)) - Number(created.get(a)) || (a < b ? 1 : -1),
    );
    const found: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await searchJobs(
        h.engine.store,
        { tag: "import-42" },
        { limit: 15, ...(cursor ? { cursor } : {}) },
      );
      found.push(...page.items.map((j) => j.id));
      cursor = page.cursor;
    } while (cursor);
    expect(found).toEqual(newest);
    const tenth = await searchJobs(h.engine.store, { tag: "tenth" }, { limit: 20 });
    expect(tenth.items.map((j) => j.id).sort()).toEqual(ids.filter((_, i) => i % 10 === 0).sort());
  });

  test("a tag entry the store refuses fails the jobs it names, each with its error, frees their unique keys, and the rest of the batch goes on", async () => {
    const h = await harness.create({ clock: systemClock });
    const send = h.engine.store.doc.send.bind(h.engine.store.doc);
    const spy = vi.spyOn(h.engine.store.doc, "send").mockImplementation((async (
      command: Parameters<typeof send>[0],
    ) => {
      const pk = (command as { input?: { Item?: { pk?: string } } }).input?.Item?.pk;
      if (command instanceof PutCommand && pk?.endsWith("#doomed"))
        throw new Error("the store refused this entry");
      return send(command);
    }) as never);
    let results: Awaited<ReturnType<typeof h.engine.producer.enqueueBatch>>;
    try {
      results = await h.engine.producer.enqueueBatch(
        Array.from({ length: 6 }, (_, i) => ({
          kind: "echo",
          payload: i,
          tags: i < 3 ? ["doomed"] : ["fine"],
          uniqueKey: `once-${i}`,
        })),
      );
    } finally {
      spy.mockRestore();
    }
    expect(results.map((r) => r.id === undefined)).toEqual([true, true, true, false, false, false]);
    // Nothing of a failed job is left: the caller's retry is a new job, not a duplicate of none.
    const retried = await h.engine.producer.enqueue({
      kind: "echo",
      payload: 0,
      tags: ["doomed"],
      uniqueKey: "once-0",
    });
    expect(retried.duplicate).toBeFalsy();
    const fine = await searchJobs(h.engine.store, { tag: "fine" }, { limit: 10 });
    expect(fine.items.map((j) => j.id).sort()).toEqual(
      results
        .slice(3)
        .map((r) => r.id)
        .sort(),
    );
  });

  test("a refused tag list is a 400 naming the tag, and nothing is written", async () => {
    const h = await harness.create({ clock: systemClock });
    const refusals: [unknown, string][] = [
      [Array.from({ length: 11 }, (_, i) => `t${i}`), "tags"],
      [["ok", "x".repeat(65)], "tags.1"],
      [["ok", "ok", "a\uD800"], "tags.2"],
      [[""], "tags.0"],
    ];
    for (const [tags, path] of refusals) {
      const refused = await h.engine.producer.enqueue({ kind: "echo", payload: 1, tags }).catch((e) => e);
      expect(refused).toBeInstanceOf(ClientError);
      expect((refused as ClientError).httpStatus).toBe(400);
      expect((refused as ClientError).issues?.map((i) => i.path)).toContain(path);
    }
    const items = await h.engine.store.doc.send(new ScanCommand({ TableName: h.engine.store.table }));
    const written = (items.Items ?? []).filter(
      (i) => String(i.pk).startsWith("job#") || String(i.pk).startsWith("tag#"),
    );
    expect(written).toEqual([]);
  });
});
