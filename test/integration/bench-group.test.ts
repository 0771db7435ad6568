import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { benchApp } from "../../bench/bench-app.ts";
import type { CompletionStart } from "../../bench/completion-kind.ts";
import { RequestMeter } from "../../bench/request-meter.ts";
import { WriteLedger } from "../../bench/write-ledger.ts";
import { allSlices, getGroup, getJobs } from "../../lib/store/group-read-ops.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import { type LocalStack, startLocalStack } from "../../local/stack.ts";
import { analyseGroups, runGroupScenario } from "../../scripts/bench-group.ts";
import { groupJson } from "../../scripts/bench-group-report.ts";

/**
 * `npm run bench`'s group scenario at a tiny size, on the real local stack: 2 groups of 30 children
 * (a full slice of 25 and one of 5 each), both in flight at once. The writes by item are exact in a
 * run without redeliveries: each child recorded once, each slice and each finished slice written once.
 */

const meter = new RequestMeter();
const ledger = new WriteLedger();
const starts = new Map<string, CompletionStart>();
let stack: LocalStack;

beforeAll(async () => {
  stack = await startLocalStack({
    app: benchApp((start) => starts.set(start.groupId, start)),
    port: 0,
    autoTick: false,
    instrument: ({ dynamodb, sqs }) => {
      meter.attach(dynamodb, "dynamodb");
      meter.attach(sqs, "sqs");
      ledger.attach(dynamodb);
    },
  });
});
afterAll(async () => {
  await stack?.stop();
});

describe("bench group scenario", () => {
  test("2 groups of 30: samples, writes by item, cost and the JSON field", async () => {
    const run = await runGroupScenario(stack, meter, ledger, starts, {
      groups: 2,
      children: 30,
      concurrency: 2,
      timeoutMs: 20_000,
      seqBase: 0,
    });
    const a = analyseGroups(run, { writesPerJob: 3, wcuPerJob: 3 });

    expect(a.n).toBe(60);
    expect(run.samples).toHaveLength(2);
    expect(new Set(run.samples.map((s) => s.id)).size).toBe(2);
    for (const s of run.samples) {
      expect(s.children).toBe(30);
      expect(s.lastChildFinishedAt).toBeGreaterThanOrEqual(s.createdAt);
      // The completion is enqueued by the write that recorded the last child, after its finalize.
      expect(s.completionStartedAt).toBeGreaterThanOrEqual(s.lastChildFinishedAt);
      expect(s.completionHandlerAt).toBeGreaterThanOrEqual(s.completionStartedAt);
    }
    // The sample's ends are the items': the latest child finishedAt, the completion's startedAt.
    const store = stack.engine.store;
    for (const s of run.samples) {
      const ids: string[] = [];
      const group = await getGroup(store, s.id);
      if (!group) throw new Error(`group ${s.id} is gone`);
      for await (const slice of allSlices(store, group)) ids.push(...slice.ids);
      const children = [...(await getJobs(store, ids)).values()];
      expect(Math.max(...children.map((c) => c.finishedAt ?? 0))).toBe(s.lastChildFinishedAt);
      const completion = await getJob(store, (await getGroup(store, s.id))?.completionJobId ?? "");
      expect(completion?.startedAt).toBe(s.completionStartedAt);
    }
    expect(a.lagMs.samples).toBe(2);
    expect(a.lagMs.p50).toBeLessThanOrEqual(a.lagMs.p99 as number);

    const ok = (s: { requests: number; errors: number }) => s.requests - s.errors;
    const { byClass } = a.writes;
    // Per group: 2 slice puts; per child: 1 record.
    expect(ok(byClass.slice)).toBe(2 * 2 + 60);
    // Per group: put, 2 slices done, beginCompletion, finishGroup.
    expect(ok(byClass.group)).toBe(2 * (1 + 2 + 1 + 1));
    // Each child job item: put (may lose to the worker's claim), claim, finalize.
    expect(ok(byClass.childJob)).toBeGreaterThanOrEqual(2 * 60);
    expect(byClass.childJob.requests).toBeLessThanOrEqual(3 * 60 + 10);
    expect(byClass.completionJob.requests).toBeGreaterThanOrEqual(2 * 3);
    // Index entries of the group items: put 1, each slice done 2 (moved), beginCompletion 2, finish 1.
    expect(a.writes.indexWriteUnits).toBe(2 * (1 + 2 * 2 + 2 + 1));
    expect(a.writes.extraPerChild).toBeCloseTo(a.writes.perChild - 3, 12);

    expect(a.workerInvocations).toBeGreaterThan(0);
    expect(a.enqueueInvocations).toBe(2);
    expect(a.cost.usdPerMillionJobs).toBeGreaterThan(0);
    expect(Number.isFinite(a.cost.usdPerMillionJobs)).toBe(true);

    const json = groupJson(a);
    expect(json).toMatchObject({ groups: 2, childrenPerGroup: 30, groupsInFlight: 2 });
    expect(json.completionLagMs.samples).toBe(2);
    expect(json.usdPerMillionChildrenWithIndexEstimate).toBeGreaterThan(json.usdPerMillionChildren);
    expect(JSON.parse(JSON.stringify(json))).toEqual(json);
  });
});
