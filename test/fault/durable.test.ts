import { writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { addKind } from "../support/project-copy.ts";
import { waitFor } from "../support/wait.ts";
import { kindJournalOf, readKindJournal } from "./kind-journal.ts";
import { type FaultStack, faultScenarios, type Json, LEASE_MS, report, times } from "./support.ts";

/**
 * Durable steps under the fault suite (docs/architecture.md §22): "each step's fn runs once per
 * job, whatever happens between steps". A durable kind in the project copy appends one journal line
 * per step function call (the external effect), and stops at barriers between steps, so the faults
 * land between steps on every job at once: the whole stack SIGKILLed after a step's write and
 * started again (twice: before and after a sleep), and the stack frozen past the lease, so each
 * run's lease is lost and the jobs are taken over while the stale runs thaw.
 */
const KIND = "fault-durable";
/**
 * Jobs a scenario runs. Each waits at a barrier holding its run, and the local event source (like
 * Lambda's) runs at most the queue's maxConcurrency (10) invocations at once, one of which may hold a
 * single job: more jobs than that at a barrier could leave a woken job no invocation to run in until
 * the barrier opens.
 */
const JOBS = 8;
const STEPS = ["one", "two", "three", "four"];

const durableKind = `import { appendFileSync, existsSync } from "node:fs";
import { setTimeout as delay } from "node:timers/promises";
import * as z from "zod";
import { defineKind } from "../define.ts";

const journal = \`\${process.env.FAULT_OBSERVER_LOG}.journal\`;
const note = (line: Record<string, unknown>) => appendFileSync(journal, \`\${JSON.stringify(line)}\\n\`);

/** Waits (with the run's signal) until the test opens the barrier; notes that the job got there. */
async function barrier(jobId: string, name: string, signal: AbortSignal) {
  note({ jobId, barrier: name, pid: process.pid });
  while (!existsSync(\`\${journal}.go-\${name}\`)) await delay(50, undefined, { signal });
}

export const faultDurable = defineKind({
  name: "${KIND}",
  payload: z.object({ n: z.number().int() }),
  queue: "default",
  maxAttempts: 10,
  timeoutSeconds: 120,
  handler: async ({ n }, ctx) => {
    const call = (step: string) => () => {
      note({ jobId: ctx.job.id, step, pid: process.pid, attempt: ctx.attempt });
      return { step, n };
    };
    await ctx.step("one", call("one"));
    await barrier(ctx.job.id, "one", ctx.signal);
    await ctx.step("two", call("two"));
    await ctx.sleep("nap", 1);
    await ctx.step("three", call("three"));
    await barrier(ctx.job.id, "three", ctx.signal);
    await ctx.step("four", call("four"));
    return { n };
  },
});
`;

/**
 * `ctx.map` under a kill: items before `held` run at once and are recorded; from `held` on, each
 * item's function waits at the "map" barrier (noted under `<job>:<item>`) before its effect, so the
 * kill lands with a lane's worth of steps in flight and the rest not started.
 */
const MAP_KIND = "fault-map";
const MAP_ITEMS = 12;
const MAP_HELD = 6;
const MAP_CONCURRENCY = 3;
const mapKind = durableKind
  .slice(0, durableKind.indexOf("export const faultDurable"))
  .concat(`export const faultMap = defineKind({
  name: "${MAP_KIND}",
  payload: z.object({ items: z.number().int(), held: z.number().int() }),
  queue: "default",
  maxAttempts: 10,
  timeoutSeconds: 120,
  handler: async ({ items, held }, ctx) => {
    const list = Array.from({ length: items }, (_, i) => i);
    const step = async (i: number) => {
      if (i >= held) await barrier(\`\${ctx.job.id}:\${i}\`, "map", ctx.signal);
      note({ jobId: ctx.job.id, item: i, pid: process.pid, attempt: ctx.attempt });
      return i * 2;
    };
    return ctx.map("items", list, step, { concurrency: ${MAP_CONCURRENCY} });
  },
});
`);

const onStack = faultScenarios((copy) => {
  addKind(copy, "fault-durable.ts", "faultDurable", durableKind);
  addKind(copy, "fault-map.ts", "faultMap", mapKind);
});

interface JournalLine {
  jobId: string;
  step?: string;
  barrier?: string;
  item?: number;
}

const readJournal = (stack: FaultStack) => readKindJournal<JournalLine>(stack);
const open = (stack: FaultStack, barrier: string) =>
  writeFileSync(`${kindJournalOf(stack)}.go-${barrier}`, "");

/** Resolves once every job has reached `barrier` since the journal had `from` lines. */
const allAt = (stack: FaultStack, ids: readonly string[], barrier: string, from = 0) =>
  waitFor(
    async () => {
      const at = new Set(
        readJournal(stack)
          .slice(from)
          .filter((l) => l.barrier === barrier)
          .map((l) => l.jobId),
      );
      return ids.every((id) => at.has(id));
    },
    `every job to reach barrier ${barrier}`,
    60_000,
    50,
  );

/** Every job done (bounded); then each job's journal holds each step's call exactly once, in order. */
async function expectEachStepOnce(stack: FaultStack, ids: readonly string[]) {
  const views = await waitFor(
    async () => {
      const answers = await Promise.all(ids.map((id) => stack.call("GET", `/jobs/${id}`)));
      return answers.every((a) => ["done", "dead", "cancelled"].includes(a.body.status)) && answers;
    },
    "every job to end",
    90_000,
    200,
  );
  const journal = readJournal(stack);
  const problems: string[] = [];
  for (const [i, view] of views.entries()) {
    const id = ids[i] as string;
    const calls = journal.filter((l) => l.jobId === id && l.step).map((l) => l.step);
    if (view.body.status !== "done")
      problems.push(`job ${id} ended ${view.body.status}: ${JSON.stringify(view.body)}`);
    if (JSON.stringify(calls) !== JSON.stringify(STEPS))
      problems.push(`job ${id}'s step calls: ${calls.join(", ")}`);
    const steps = await stack.call("GET", `/jobs/${id}/steps`);
    const listed = (steps.body.steps as Json[]).map((s) => `${s.name}:${s.status}`);
    if (listed.join(",") !== "one:done,two:done,nap:done,three:done,four:done")
      problems.push(`job ${id}'s steps: ${listed.join(",")}`);
  }
  expect(problems).toEqual([]);
  return journal;
}

describe("durable steps under faults on npm start", () => {
  it("the stack SIGKILLed after a step's write, before and after a sleep, started again: each step's function ran once", async () => {
    await onStack("durable-kill", async (stack) => {
      const ids = await stack.enqueueMany(times(JOBS, (n) => ({ kind: KIND, payload: { n } })));
      await allAt(stack, ids, "one");
      await stack.killAll();
      await stack.restart();
      const restartedAt = Date.now();
      const mark = readJournal(stack).length;
      open(stack, "one");
      await allAt(stack, ids, "three", mark);
      await stack.killAll();
      await stack.restart();
      open(stack, "three");
      const journal = await expectEachStepOnce(stack, ids);
      report("durable-kill", {
        jobs: ids.length,
        kills: 2,
        stepCalls: journal.filter((l) => l.step).length,
        secondsAfterFirstRestart: Math.round((Date.now() - restartedAt) / 1000),
      });
    });
  }, 180_000);

  it("the stack frozen past the lease between two steps: the stale runs record nothing, the new owners run each step once", async () => {
    await onStack("durable-freeze", async (stack) => {
      open(stack, "three");
      const ids = await stack.enqueueMany(times(JOBS, (n) => ({ kind: KIND, payload: { n } })));
      await allAt(stack, ids, "one");
      // The barrier opens while the stack is frozen: on thaw every stale run could go on at once.
      const freezing = stack.freeze(2 * LEASE_MS + 1000);
      open(stack, "one");
      await freezing;
      const journal = await expectEachStepOnce(stack, ids);
      const reached = journal.filter((l) => l.barrier === "one").length;
      // Each job came to the first barrier again under its new owner.
      expect(reached).toBeGreaterThanOrEqual(2 * ids.length);
      report("durable-freeze", { jobs: ids.length, barrierOneArrivals: reached });
    });
  }, 90_000);

  it("the stack SIGKILLed in the middle of ctx.map, started again: each item's function ran once", async () => {
    await onStack("durable-map-kill", async (stack) => {
      const [id] = await stack.enqueueMany([
        { kind: MAP_KIND, payload: { items: MAP_ITEMS, held: MAP_HELD } },
      ]);
      if (!id) throw new Error("no job enqueued");
      const inFlight = times(MAP_CONCURRENCY, (i) => `${id}:${MAP_HELD + i}`);
      await allAt(stack, inFlight, "map");
      const itemsOf = () => readJournal(stack).flatMap((l) => (l.item === undefined ? [] : [l.item]));
      // In the middle: the first items recorded, a lane's worth in flight, the rest not started.
      expect(itemsOf().sort((x, y) => x - y)).toEqual(times(MAP_HELD, (i) => i));
      const killedAt = Date.now();
      await stack.killAll();
      await stack.restart();
      open(stack, "map");
      const view = await waitFor(
        async () => {
          const answer = await stack.call("GET", `/jobs/${id}`);
          return ["done", "dead", "cancelled"].includes(answer.body.status) && answer;
        },
        "the job to end",
        60_000,
        200,
      );
      expect(view.body.status).toBe("done");
      expect(view.body.result).toEqual(times(MAP_ITEMS, (i) => i * 2));
      const calls = times(MAP_ITEMS, (i) => itemsOf().filter((item) => item === i).length);
      expect(calls).toEqual(times(MAP_ITEMS, () => 1));
      const steps = await stack.call("GET", `/jobs/${id}/steps`);
      expect((steps.body.steps as Json[]).filter((s) => s.status === "done")).toHaveLength(MAP_ITEMS);
      report("durable-map-kill", {
        items: MAP_ITEMS,
        inFlightAtKill: MAP_CONCURRENCY,
        secondsAfterKill: Math.round((Date.now() - killedAt) / 1000),
      });
    });
  }, 60_000);
});
