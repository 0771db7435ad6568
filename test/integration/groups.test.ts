import { describe, expect, test } from "vitest";
import * as z from "zod";
import { systemClock } from "../../lib/clock.ts";
import { RetryAfterError } from "../../lib/errors.ts";
import { Groups } from "../../lib/groups/group-service.ts";
import type { GroupChildView } from "../../lib/job/group-schemas.ts";
import type { CompletionContext } from "../../lib/job/kind.ts";
import { defineUnboundKind } from "../../lib/job/kind.ts";
import { silentLog } from "../../lib/observability/log.ts";
import { createWorker } from "../../lib/runtime/worker.ts";
import type { Engine } from "../../lib/services/engine-services.ts";
import type { GroupItem } from "../../lib/store/group-item.ts";
import { getGroup } from "../../lib/store/group-read-ops.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import { EventSourcePoller } from "../../local/event-source-poller.ts";
import { OffsetClock } from "../support/clock.ts";
import { type Harness, harnessPerTest, settled } from "../support/engine-harness.ts";
import { waitFor } from "../support/wait.ts";
import { doomedEngine } from "./crash-switch.ts";

interface FoldRun {
  jobId: string;
  report: string;
  completion: CompletionContext | undefined;
  children: GroupChildView[];
  startedAt: number;
}
const foldRuns: FoldRun[] = [];

/** A completion job: records what it was told and reads every child, page by page. */
const fold = defineUnboundKind({
  name: "test-fold",
  queue: "default",
  payload: z.object({ report: z.string() }),
  maxAttempts: 3,
  timeoutSeconds: 60,
  handler: async ({ report }, ctx) => {
    const startedAt = Date.now();
    const children: GroupChildView[] = [];
    let cursor: string | undefined;
    do {
      const page = await ctx.completion?.children({ limit: 100, ...(cursor ? { cursor } : {}) });
      children.push(...(page?.items ?? []));
      cursor = page?.cursor;
    } while (cursor);
    foldRuns.push({ jobId: ctx.job.id, report, completion: ctx.completion, children, startedAt });
    return { children: children.length };
  },
});

/** Fans out `width` children of depth - 1 (sleepers at depth 0) and folds them into `report`. */
const fanout = defineUnboundKind({
  name: "test-fanout",
  queue: "default",
  payload: z.object({
    depth: z.number().int(),
    width: z.number().int(),
    leafMs: z.number().int(),
    tag: z.string(),
  }),
  maxAttempts: 3,
  timeoutSeconds: 60,
  handler: async ({ depth, width, leafMs, tag }, ctx) => {
    const children = Array.from({ length: width }, (_, i) =>
      depth > 1
        ? { kind: "test-fanout", payload: { depth: depth - 1, width, leafMs, tag: `${tag}.${i}` } }
        : { kind: "sleep", payload: { ms: leafMs } },
    );
    const group = await ctx.group({ children, onComplete: { kind: "test-fold", payload: { report: tag } } });
    return { group: group.id };
  },
});

/** Creates its group, then fails its first run: the retry must get the same group back. */
const mapThenFail = defineUnboundKind({
  name: "test-map-then-fail",
  queue: "default",
  payload: z.object({ n: z.number().int() }),
  maxAttempts: 3,
  timeoutSeconds: 60,
  handler: async ({ n }, ctx) => {
    const group = await ctx.group({
      children: Array.from({ length: n }, (_, i) => ({ kind: "echo", payload: { i } })),
      onComplete: { kind: "test-fold", payload: { report: "retried" } },
      step: "map",
    });
    if (ctx.attempt === 1) throw new RetryAfterError(1, "fails after its fan-out");
    return { group: group.id, total: group.counts.total };
  },
});

const harness = harnessPerTest();
const kinds = [fold, fanout, mapThenFail];

/** A consumer of the harness's queue on its own engine (own SDK clients), as another Lambda instance. */
function startConsumer(h: Harness, engine: Engine = h.engine): EventSourcePoller {
  const poller = new EventSourcePoller(h.sqs, {
    queueName: h.queue.name,
    queueUrl: h.urls.url,
    queueArn: "arn:aws:sqs:us-east-1:000000000000:test",
    batchSize: 10,
    batchWindowSeconds: 0,
    leaseSeconds: h.queue.leaseSeconds,
    maxConcurrency: 2,
    handler: createWorker(engine, { recordConcurrency: 10 }),
    log: silentLog,
  });
  poller.start();
  return poller;
}

/** Waits on the group's own item; the bound is for a hang, wide enough for a loaded 2-core machine. */
const groupIn = (h: Harness, id: string, ...statuses: GroupItem["status"][]) =>
  waitFor(
    async () => {
      const g = await getGroup(h.engine.store, id);
      return g && statuses.includes(g.status) ? g : undefined;
    },
    `group ${id} to be ${statuses.join(" or ")}`,
    100_000,
  );

/**
 * A worker on its own clients takes one message and dies right after its finalize landed, before the
 * group heard of the job (its process never returns). result: the event it was handed.
 */
async function crashAfterFinalize(h: Harness) {
  const doomed = doomedEngine(
    harness.emulators(),
    h.engine,
    { name: h.queue.name, url: h.urls.url },
    { afterAnswerMatching: (_, input) => String(input.UpdateExpression).includes("#finishedAt") },
  );
  const event = await h.receive(1);
  void createWorker(doomed.engine, { recordConcurrency: 1 })(event);
  await waitFor(async () => doomed.crash.tripped, "the crash after the finalize");
  return event;
}

const runsOf = (jobId: string) => foldRuns.filter((r) => r.jobId === jobId);

/** A harness and a three-level tree of fan-outs (leaves of `leafMs`, tagged `tag`), its root folded into `report`. */
async function tree(leafMs: number, tag: string, report: string) {
  const h = await harness.create({ clock: systemClock, extraKinds: kinds });
  const { group } = await h.engine.groups.create({
    children: [{ kind: "test-fanout", payload: { depth: 2, width: 2, leafMs, tag } }],
    onComplete: { kind: "test-fold", payload: { report } },
  });
  return { h, group };
}

// A hang's bound, not a wait for state: 1 000 children on a loaded 2-core machine took over 30 s.
describe("job groups on the emulators", { timeout: 120_000 }, () => {
  test("1 000 children ending at once on four consumers: the completion job runs exactly once, and reads every child", async () => {
    const h = await harness.create({ clock: systemClock, extraKinds: kinds });
    const { group } = await h.engine.groups.create({
      children: Array.from({ length: 1000 }, (_, i) => ({ kind: "echo", payload: { i } })),
      onComplete: { kind: "test-fold", payload: { report: "thousand" } },
    });
    expect(group).toMatchObject({ status: "sealed", counts: { total: 1000, pending: 1000 } });
    const pollers = [startConsumer(h)];
    for (let n = 0; n < 3; n++) {
      const twin = doomedEngine(harness.emulators(), h.engine, { name: h.queue.name, url: h.urls.url });
      pollers.push(startConsumer(h, twin.engine));
    }
    const done = await groupIn(h, group.id, "succeeded");
    await Promise.all(pollers.map((p) => p.stop()));
    const runs = runsOf(done.completionJobId ?? "");
    expect(runs).toHaveLength(1);
    expect(runs[0]?.completion).toMatchObject({
      status: "succeeded",
      counts: { done: 1000, dead: 0, cancelled: 0 },
    });
    const children = runs[0]?.children ?? [];
    expect(new Set(children.map((c) => c.id)).size).toBe(1000);
    expect(children.map((c) => (c.result as { i: number }).i)).toEqual(
      Array.from({ length: 1000 }, (_, i) => i),
    );
    expect(await h.engine.groups.get(group.id)).toMatchObject({
      status: "succeeded",
      counts: { total: 1000, pending: 0, done: 1000 },
    });
  });

  test("a group created before slices spread (all in its own partition) still records every child and completes once", async () => {
    const h = await harness.create({ clock: systemClock, extraKinds: kinds });
    // What a deployment from before the spread wrote: no slicePartitions on the group, no `n` in
    // its children's memberships, the slices under group#<id>.
    const before = { ...h.engine.store, layout: { ...h.engine.store.layout, slicePartitions: undefined } };
    const groups = new Groups({ ...h.engine, store: before as unknown as typeof h.engine.store });
    const { group } = await groups.create({
      children: Array.from({ length: 60 }, (_, i) => ({ kind: "echo", payload: { i } })),
      onComplete: { kind: "test-fold", payload: { report: "from before" } },
    });
    const stored = await getGroup(h.engine.store, group.id);
    expect(stored?.slicePartitions).toBeUndefined();
    const poller = startConsumer(h);
    const done = await groupIn(h, group.id, "succeeded");
    await poller.stop();
    const runs = runsOf(done.completionJobId ?? "");
    expect(runs).toHaveLength(1);
    expect(runs[0]?.completion?.counts).toMatchObject({ done: 60, dead: 0, cancelled: 0 });
    expect((runs[0]?.children ?? []).map((c) => (c.result as { i: number }).i)).toEqual(
      Array.from({ length: 60 }, (_, i) => i),
    );
    expect(await h.engine.groups.get(group.id)).toMatchObject({ counts: { total: 60, done: 60 } });
  });

  test("a worker that dies after a child's finalize, before its group heard: the next delivery records it, once", async () => {
    const h = await harness.create({ clock: systemClock, extraKinds: kinds });
    const { group } = await h.engine.groups.create({
      children: [{ kind: "echo", payload: { only: true } }],
      onComplete: { kind: "test-fold", payload: { report: "crash" } },
    });
    const event = await crashAfterFinalize(h);
    const child = await getJob(
      h.engine.store,
      (await getGroup(h.engine.store, group.id))?.completionJobId ?? "",
    );
    expect(child).toBeUndefined(); // no completion yet: the group never heard of the child
    expect((await h.engine.groups.get(group.id)).counts).toMatchObject({ done: 0, pending: 1 });
    // The message comes back (its Lambda died), and a healthy worker gets it.
    const [record] = event.Records;
    const { ChangeMessageVisibilityCommand } = await import("@aws-sdk/client-sqs");
    await h.sqs.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: h.urls.url,
        ReceiptHandle: record?.receiptHandle,
        VisibilityTimeout: 0,
      }),
    );
    const poller = startConsumer(h);
    const done = await groupIn(h, group.id, "succeeded");
    await poller.stop();
    expect(runsOf(done.completionJobId ?? "")).toHaveLength(1);
  });

  test("a child's end that never reached its group, its message gone: the reaper's look at the stalled group records it", async () => {
    const clock = new OffsetClock();
    const h = await harness.create({ clock, extraKinds: kinds });
    const { group } = await h.engine.groups.create({
      children: [
        { kind: "echo", payload: { a: 1 } },
        { kind: "echo", payload: { b: 2 } },
      ],
      onComplete: { kind: "test-fold", payload: { report: "reaper" } },
    });
    const event = await crashAfterFinalize(h);
    // Its message is lost for good (say, deleted by hand); the other child runs normally.
    const { DeleteMessageCommand } = await import("@aws-sdk/client-sqs");
    await h.sqs.send(
      new DeleteMessageCommand({ QueueUrl: h.urls.url, ReceiptHandle: event.Records[0]?.receiptHandle }),
    );
    const poller = startConsumer(h);
    await waitFor(
      async () => (await h.engine.groups.get(group.id)).counts.done === 1 || undefined,
      "the other child",
    );
    expect((await h.engine.groups.check()).groupRepairs).toBe(0); // not stalled yet: nothing read
    clock.advance(6 * 60_000);
    expect(await h.engine.groups.check()).toMatchObject({ groupsChecked: 1, groupRepairs: 1 });
    const done = await groupIn(h, group.id, "succeeded");
    await poller.stop();
    expect(runsOf(done.completionJobId ?? "")).toHaveLength(1);
    expect(runsOf(done.completionJobId ?? "")[0]?.completion?.counts).toMatchObject({ done: 2 });
  });

  test("terminate: the first dead child fails the group, running siblings are cancelled through their signal, and the completion learns who failed", async () => {
    const h = await harness.create({ clock: systemClock, extraKinds: kinds });
    const { group } = await h.engine.groups.create({
      children: [
        ...Array.from({ length: 4 }, () => ({ kind: "sleep", payload: { ms: 600_000 } })),
        { kind: "fail", payload: { message: "bad row" }, maxAttempts: 1, delaySeconds: 1 },
      ],
      onComplete: { kind: "test-fold", payload: { report: "terminate" } },
      failure: "terminate",
    });
    const poller = startConsumer(h);
    const done = await groupIn(h, group.id, "failed");
    await poller.stop();
    const run = runsOf(done.completionJobId ?? "")[0];
    expect(run?.completion).toMatchObject({
      status: "failed",
      counts: { done: 0, dead: 1, cancelled: 4 },
      failedChild: { error: "bad row" },
    });
    const failed = run?.children.find((c) => c.status === "dead");
    expect(run?.completion?.failedChild?.id).toBe(failed?.id);
    const sleepers = run?.children.filter((c) => c.status === "cancelled") ?? [];
    expect(sleepers).toHaveLength(4);
    for (const s of sleepers) expect((await getJob(h.engine.store, s.id))?.status).toBe("cancelled");
  });

  test("a tree three levels deep: each level's completion runs after the level below, and the root's last", async () => {
    const { h, group } = await tree(0, "root.0", "root");
    const poller = startConsumer(h);
    const done = await groupIn(h, group.id, "succeeded");
    await poller.stop();
    const [root] = runsOf(done.completionJobId ?? "");
    const level1 = foldRuns.filter((r) => r.report === "root.0");
    const level2 = foldRuns.filter((r) => r.report === "root.0.0" || r.report === "root.0.1");
    expect([level1.length, level2.length]).toEqual([1, 2]);
    expect(Math.max(...level2.map((r) => r.startedAt))).toBeLessThanOrEqual(level1[0]?.startedAt ?? 0);
    expect(level1[0]?.startedAt ?? Infinity).toBeLessThanOrEqual(root?.startedAt ?? 0);
    // The root's one child handed its slot to the group it created: the root waited for that group.
    expect(root?.completion?.counts).toMatchObject({ done: 1 });
  });

  test("cancelling the root of a tree cancels every group below it and their running children", async () => {
    const { h, group } = await tree(600_000, "cx", "cx-root");
    const poller = startConsumer(h);
    // Wait until the four leaves run.
    const leaves = await waitFor(async () => {
      const top = await h.engine.groups.children(group.id, {});
      const fan = top.items[0] ? await getJob(h.engine.store, top.items[0].id) : undefined;
      const level1 = fan?.handoff ? await h.engine.groups.children(fan.handoff, {}) : undefined;
      const subIds = await Promise.all(
        (level1?.items ?? []).map(async (c) => (await getJob(h.engine.store, c.id))?.handoff),
      );
      if (subIds.length !== 2 || subIds.some((s) => !s)) return undefined;
      const leafPages = await Promise.all(subIds.map((s) => h.engine.groups.children(s ?? "", {})));
      const leafIds = leafPages.flatMap((p) => p.items.map((c) => c.id));
      const leafJobs = await Promise.all(leafIds.map((id) => getJob(h.engine.store, id)));
      return leafJobs.length === 4 && leafJobs.every((j) => j?.status === "running")
        ? { groups: [fan?.handoff ?? "", ...subIds.map((s) => s ?? "")], leafIds }
        : undefined;
    }, "four running leaves");
    const cancelled = await h.engine.groups.cancel(group.id);
    expect(cancelled.status).toBe("cancelled");
    for (const id of leaves.groups) expect((await getGroup(h.engine.store, id))?.status).toBe("cancelled");
    for (const id of leaves.leafIds) await settled(h, id, "cancelled");
    await poller.stop();
    expect(foldRuns.filter((r) => r.report.startsWith("cx"))).toEqual([]);
  });

  test("an unsealed group seals itself at its expiry, as failed: its completion runs once its children ended", async () => {
    const clock = new OffsetClock();
    const h = await harness.create({ clock, extraKinds: kinds });
    const { group } = await h.engine.groups.create({
      children: [{ kind: "echo", payload: 1 }],
      onComplete: { kind: "test-fold", payload: { report: "expiry" } },
      sealed: false,
      expiresInSeconds: 600,
    });
    const poller = startConsumer(h);
    await waitFor(
      async () => (await h.engine.groups.get(group.id)).counts.done === 1 || undefined,
      "its child",
    );
    expect((await h.engine.groups.get(group.id)).status).toBe("open");
    expect((await h.engine.groups.check()).groupsExpired).toBe(0);
    clock.advance(601_000);
    expect(await h.engine.groups.check()).toMatchObject({ groupsExpired: 1 });
    const done = await groupIn(h, group.id, "failed");
    await poller.stop();
    expect(done.expired).toBe(true);
    expect(runsOf(done.completionJobId ?? "")[0]?.completion).toMatchObject({
      status: "failed",
      expired: true,
    });
    await expect(h.engine.groups.addChildren(group.id, { children: [{ kind: "echo" }] })).rejects.toThrow(
      /sealed|no more/,
    );
  });

  test("a handler retried after it created its group gets the same group back: one group, its children once, one completion", async () => {
    const h = await harness.create({ clock: systemClock, extraKinds: kinds });
    const { job } = await h.engine.producer.enqueue({ kind: "test-map-then-fail", payload: { n: 30 } });
    const poller = startConsumer(h);
    const parent = await settled(h, job.id, "done");
    expect(parent.attempts).toBe(2);
    const groupId = `${job.id}.map`;
    expect(JSON.parse(parent.result ?? "null")).toEqual({ group: groupId, total: 30 });
    const done = await groupIn(h, groupId, "succeeded");
    await poller.stop();
    expect(done.size).toBe(30);
    expect(done.parentJobId).toBe(job.id);
    expect(runsOf(done.completionJobId ?? "")).toHaveLength(1);
    expect(runsOf(done.completionJobId ?? "")[0]?.children.map((c) => c.status)).toEqual(
      Array(30).fill("done"),
    );
    expect([...(parent.childGroups ?? [])]).toEqual([groupId]);
    // Pages of 7 walk the 30 children in order, each once; a filter that matches none ends at once.
    const walked: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await h.engine.groups.children(groupId, { limit: 7, ...(cursor ? { cursor } : {}) });
      expect(page.items.length).toBeLessThanOrEqual(7);
      walked.push(...page.items.map((c) => c.id));
      cursor = page.cursor;
    } while (cursor);
    expect(walked).toEqual(runsOf(done.completionJobId ?? "")[0]?.children.map((c) => c.id));
    expect(await h.engine.groups.children(groupId, { status: "dead" })).toEqual({ items: [] });
  });
});
