import { performance } from "node:perf_hooks";
import pLimit from "p-limit";
import { COMPLETION_KIND, type CompletionStart } from "../bench/completion-kind.ts";
import type { MeterSnapshot, RequestMeter } from "../bench/request-meter.ts";
import {
  type ClassStats,
  emptyClassStats,
  type LedgerSnapshot,
  sumClasses,
  type WriteLedger,
} from "../bench/write-ledger.ts";
import { allSlices, getGroup, getJobs } from "../lib/store/group-read-ops.ts";
import { getJob } from "../lib/store/read-ops.ts";
import type { LocalStack } from "../local/stack.ts";
import { DEFAULT_KIND, DEFAULT_PAYLOAD_BYTES } from "./bench-args.ts";
import { assumedGroupCreateMs, payload, percentile, sleep } from "./bench-config.ts";
import { costPerUnit, meteredUsage } from "./bench-usage.ts";

/**
 * The group scenario of `npm run bench`: groups of children (echo, or the run's kind) created through the engine's group
 * service (what the enqueue function does for `{ group }`), run by the stack's own workers, each
 * completed by the bench's completion kind. Every SDK request in the window is metered; the job and
 * group items are read back after it, for the completion lag.
 */

export interface GroupScenario {
  groups: number;
  children: number;
  /** Groups in flight at once: a slot creates its next group once its last one's completion started. */
  concurrency: number;
  timeoutMs: number;
  /** Payload sequence numbers start here (payloads differ from run to run, not in size). */
  seqBase: number;
  /** The children's kind (default echo) and their payloads' serialized size (default 256). */
  kind?: string;
  payloadBytes?: number;
}

export interface GroupSample {
  id: string;
  children: number;
  createdAt: number;
  /** The latest finishedAt among the group's children (job items). */
  lastChildFinishedAt: number;
  /** The completion job's startedAt (its claim), and when its handler began (the bench kind's note). */
  completionStartedAt: number;
  completionHandlerAt: number;
}

export interface GroupRun {
  scenario: GroupScenario;
  snap: MeterSnapshot;
  writes: LedgerSnapshot;
  samples: GroupSample[];
  createCallMs: number[];
  t0: number;
}

/** The stack's terminal counters: the window's own are differences of these. */
function counters(stack: LocalStack) {
  const m = stack.metrics;
  return {
    succeeded: m.total("succeeded"),
    failed: m.total("dead") + m.total("cancelled"),
    groupsFinished: m.total("groupFinished"),
  };
}

const deleted = (s: MeterSnapshot) =>
  (s.operations["sqs:DeleteMessageBatch"]?.messages ?? 0) +
  (s.operations["sqs:DeleteMessage"]?.messages ?? 0);

/** Bounded poll on in-memory state only (no AWS requests); fails at once when a job ended badly. */
async function until(
  ready: () => boolean,
  progress: () => string,
  stack: LocalStack,
  failedBefore: number,
  deadline: number,
): Promise<void> {
  while (!ready()) {
    const failed = counters(stack).failed - failedBefore;
    if (failed > 0) throw new Error(`${failed} jobs ended dead or cancelled; every child should succeed`);
    if (performance.now() > deadline) throw new Error(`group scenario timed out: ${progress()}`);
    await sleep(5);
  }
}

/**
 * Runs the scenario in a fresh meter window. `starts` is where the completion kind notes its runs
 * (bench/bench-app.ts). result: the window's requests and writes, and one sample per group.
 */
export async function runGroupScenario(
  stack: LocalStack,
  meter: RequestMeter,
  ledger: WriteLedger,
  starts: ReadonlyMap<string, CompletionStart>,
  scenario: GroupScenario,
): Promise<GroupRun> {
  const { groups, children, concurrency, timeoutMs, seqBase } = scenario;
  const kind = scenario.kind ?? DEFAULT_KIND;
  const payloadBytes = scenario.payloadBytes ?? DEFAULT_PAYLOAD_BYTES;
  const before = counters(stack);
  const deadline = performance.now() + timeoutMs;
  const completionIds = new Set<string>();
  ledger.tag = (pk, sk) => (sk === "job" && completionIds.has(pk.slice(4)) ? "completion job" : undefined);
  meter.reset();
  ledger.reset();

  const t0 = Date.now();
  const createCallMs: number[] = [];
  const ids: string[] = [];
  const slot = pLimit(concurrency);
  await Promise.all(
    Array.from({ length: groups }, (_, g) =>
      slot(async () => {
        const request = {
          children: Array.from({ length: children }, (_, i) => ({
            kind,
            payload: payload(seqBase + g * children + i, payloadBytes),
          })),
          onComplete: { kind: COMPLETION_KIND },
        };
        const t = performance.now();
        const { group } = await stack.engine.groups.create(request);
        createCallMs.push(performance.now() - t);
        ids.push(group.id);
        if (group.completionJobId) completionIds.add(group.completionJobId);
        await until(
          () => starts.has(group.id),
          () => `group ${group.id}'s completion job has not started`,
          stack,
          before.failed,
          deadline,
        );
      }),
    ),
  );
  // Every child and completion job done, every group finished, every message deleted.
  const jobs = groups * (children + 1);
  await until(
    () => {
      const now = counters(stack);
      return (
        now.succeeded - before.succeeded >= jobs &&
        now.groupsFinished - before.groupsFinished >= groups &&
        deleted(meter.snapshot()) >= jobs
      );
    },
    () => {
      const now = counters(stack);
      return `${now.succeeded - before.succeeded}/${jobs} jobs succeeded, ${now.groupsFinished - before.groupsFinished}/${groups} groups finished, ${deleted(meter.snapshot())}/${jobs} messages deleted`;
    },
    stack,
    before.failed,
    deadline,
  );
  const snap = meter.snapshot();
  const writes = ledger.snapshot();
  ledger.tag = undefined;

  // Read back after the snapshot, so these reads are not counted as the scenario's own.
  const samples = await Promise.all(ids.map((id) => readSample(stack, id, starts)));
  return { scenario, snap, writes, samples, createCallMs, t0 };
}

async function readSample(
  stack: LocalStack,
  id: string,
  starts: ReadonlyMap<string, CompletionStart>,
): Promise<GroupSample> {
  const store = stack.engine.store;
  const group = await getGroup(store, id);
  if (group?.status !== "succeeded")
    throw new Error(`group ${id} is ${group?.status ?? "missing"}, not succeeded`);
  const childIds: string[] = [];
  for await (const slice of allSlices(store, group)) childIds.push(...slice.ids);
  const items = await getJobs(store, childIds);
  const notDone = childIds.filter((c) => items.get(c)?.status !== "done");
  if (notDone.length > 0) throw new Error(`${notDone.length} children of group ${id} are not done`);
  const completion = group.completionJobId ? await getJob(store, group.completionJobId) : undefined;
  const start = starts.get(id);
  if (completion?.startedAt === undefined || !start)
    throw new Error(`group ${id}'s completion job never started`);
  if (start.done !== childIds.length)
    throw new Error(`group ${id}'s completion saw ${start.done} children done`);
  return {
    id,
    children: childIds.length,
    createdAt: group.createdAt,
    lastChildFinishedAt: Math.max(...[...items.values()].map((j) => j.finishedAt ?? Number.NaN)),
    completionStartedAt: completion.startedAt,
    completionHandlerAt: start.handlerStartedAt,
  };
}

const zero: ClassStats = emptyClassStats();

/**
 * The scenario's figures per child. `plain` is the single-kind scenario's writes per job, for the
 * extra a child costs over a plain job.
 */
export function analyseGroups(r: GroupRun, plain: { writesPerJob: number; wcuPerJob: number }) {
  const n = r.samples.reduce((sum, s) => sum + s.children, 0);
  const m = meteredUsage(r.snap, {
    callMs: r.createCallMs,
    assumedMs: r.samples.map((s) => assumedGroupCreateMs(s.children)),
  });
  const priced = costPerUnit(m, n);
  const cls = (name: string) => r.writes[name] ?? zero;
  const groupSide = sumClasses(r.writes, (c) => c === "slice" || c === "group" || c === "completion job");
  const allWrites = sumClasses(r.writes, () => true);
  const sorted = (xs: number[]) => xs.sort((a, b) => a - b);
  const lags = sorted(r.samples.map((s) => s.completionStartedAt - s.lastChildFinishedAt));
  const handlerLags = sorted(r.samples.map((s) => s.completionHandlerAt - s.lastChildFinishedAt));
  const lastStart = Math.max(...r.samples.map((s) => s.completionStartedAt));
  return {
    n,
    scenario: r.scenario,
    childrenPerSecond: n / ((lastStart - r.t0) / 1000),
    operations: r.snap.operations,
    ...m,
    ...priced,
    writes: {
      perChild: m.ddbWrite.requests / n,
      wcuPerChild: m.wcu / n,
      extraPerChild: m.ddbWrite.requests / n - plain.writesPerJob,
      extraWcuPerChild: m.wcu / n - plain.wcuPerJob,
      plain,
      byClass: {
        childJob: cls("job"),
        slice: cls("slice"),
        group: cls("group"),
        completionJob: cls("completion job"),
        other: sumClasses(r.writes, (c) => !["job", "slice", "group", "completion job"].includes(c)),
      },
      groupSide,
      indexWriteUnits: allWrites.indexWriteUnits,
    },
    lagMs: { samples: lags.length, p50: percentile(lags, 50), p99: percentile(lags, 99), max: lags.at(-1) },
    handlerLagMs: { p50: percentile(handlerLags, 50), p99: percentile(handlerLags, 99) },
  };
}

export type GroupAnalysis = ReturnType<typeof analyseGroups>;
