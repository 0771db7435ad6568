import { describe, expect, it } from "vitest";
import { addKind } from "../support/project-copy.ts";
import { waitFor } from "../support/wait.ts";
import { readKindJournal } from "./kind-journal.ts";
import {
  allAtOnce,
  assertHealthy,
  type FaultStack,
  faultScenarios,
  type Json,
  LAMBDA_KIND,
  LEASE_MS,
  report,
  times,
} from "./support.ts";

/**
 * Child jobs and racing waits under a stack SIGKILL (issue 40's fault suite; docs/architecture.md
 * §22). The child is the suite's observer kind (a start and an end line per run), so "the child
 * runs once" is read from the observer log by assertHealthy; the parent and the racing kind append
 * one journal line when a run begins and one when it gets past its wait, so "the parent resumes
 * once" and "one branch wins" are read from the journal and the jobs' views.
 */
const PARENT = "fault-parent";
const RACER = "fault-race";
const SHIPPED = "fault.shipped";

const journalHeader = `import { appendFileSync } from "node:fs";
import * as z from "zod";
import { defineKind } from "../define.ts";

const journal = \`\${process.env.FAULT_OBSERVER_LOG}.journal\`;
const note = (line: Record<string, unknown>) => appendFileSync(journal, \`\${JSON.stringify(line)}\\n\`);
`;

const parentKind = `${journalHeader}
export const faultParent = defineKind({
  name: "${PARENT}",
  payload: z.object({ ms: z.number().int().min(0) }),
  queue: "default",
  maxAttempts: 10,
  timeoutSeconds: 120,
  handler: async ({ ms }, ctx) => {
    note({ jobId: ctx.job.id, at: "begin", attempt: ctx.attempt });
    const child = await ctx.invoke("${LAMBDA_KIND}", { ms }, { name: "child" });
    note({ jobId: ctx.job.id, at: "resumed", child });
    return { child };
  },
});
`;

const racerKind = `${journalHeader}
export const faultRace = defineKind({
  name: "${RACER}",
  payload: z.object({ order: z.string() }),
  queue: "default",
  maxAttempts: 10,
  timeoutSeconds: 120,
  handler: async ({ order }, ctx) => {
    note({ jobId: ctx.job.id, at: "begin", attempt: ctx.attempt });
    const token = await ctx.createToken("approval", { timeoutSeconds: 600 });
    const won = await ctx.waitForAny("approve-or-ship", [
      ctx.token("approved", token),
      ctx.event("shipped", { event: "${SHIPPED}", match: order }),
    ]);
    note({ jobId: ctx.job.id, at: "won", branch: won.branch });
    return { order, won: won.branch, data: won.data };
  },
});
`;

const onStack = faultScenarios((copy) => {
  addKind(copy, "fault-parent.ts", "faultParent", parentKind);
  addKind(copy, "fault-race.ts", "faultRace", racerKind);
});

interface JournalLine {
  jobId: string;
  at: "begin" | "resumed" | "won";
  branch?: string;
}

const readJournal = (stack: FaultStack) => readKindJournal<JournalLine>(stack);
const linesOf = (stack: FaultStack, id: string, at: JournalLine["at"]) =>
  readJournal(stack).filter((l) => l.jobId === id && l.at === at);

/** Each job's view once it is scheduled and waiting for `what` (bounded). */
const allWaiting = (stack: FaultStack, ids: readonly string[], what: string) =>
  waitFor(
    async () => {
      const views = await Promise.all(ids.map((id) => stack.call("GET", `/jobs/${id}`)));
      return views.every((v) => v.body.status === "scheduled" && v.body.waiting?.for === what) && views;
    },
    `every job to wait for ${what}`,
    30_000,
    100,
  );

/** Each job's view once all ended (bounded). */
const allEnded = (stack: FaultStack, ids: readonly string[]) =>
  waitFor(
    async () => {
      const views = await Promise.all(ids.map((id) => stack.call("GET", `/jobs/${id}`)));
      return (
        views.every((v) => ["done", "dead", "cancelled"].includes(v.body.status)) && views.map((v) => v.body)
      );
    },
    "every job to end",
    30_000,
    100,
  );

const doneEntries = (view: Json) =>
  ((view.history ?? []) as Json[]).filter((h) => h.outcome === "done").length;

/**
 * POST to a token's url, as whoever holds it would, on the stack as it runs now: a restarted stack
 * listens on another port (PORT=0), so the url's path and secret go to the stack's current origin.
 */
async function completeToken(
  stack: FaultStack,
  url: string,
  data: unknown,
): Promise<{ status: number; body: Json }> {
  const { pathname, search } = new URL(url);
  const res = await fetch(`${stack.url}${pathname}${search}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ data }),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Json) : {} };
}

describe("child jobs and racing waits under a stack SIGKILL on npm start", () => {
  it("the stack SIGKILLed while each parent's child runs: the child ends done once, the parent resumes once with its result", async () => {
    await onStack("children-kill", async (stack) => {
      const parents = await stack.enqueueMany(times(3, () => ({ kind: PARENT, payload: { ms: 1500 } })));
      const waiting = await allWaiting(stack, parents, "child");
      const children = waiting.map((v) => v.body.waiting.child as string);
      // The kill lands in the children's runs: each has started, none has ended.
      await stack.waitForStarts(children, "every child to start");
      const { deadAt } = await stack.killAll();
      await stack.restart();
      const restartedAt = Date.now();

      const health = await assertHealthy(stack, children, {
        leaseMs: LEASE_MS,
        faultEndedAt: restartedAt,
        killLandedBy: deadAt,
      });
      const views = await allEnded(stack, parents);
      const problems: string[] = [];
      for (const [i, parent] of views.entries()) {
        const childId = children[i] as string;
        const child = (await stack.call("GET", `/jobs/${childId}`)).body;
        if (parent.status !== "done" || doneEntries(parent) !== 1)
          problems.push(`parent ${parent.id} ended ${parent.status}, done ${doneEntries(parent)} times`);
        if (JSON.stringify(parent.result) !== JSON.stringify({ child: child.result }))
          problems.push(
            `parent ${parent.id}'s result ${JSON.stringify(parent.result)}, child's ${JSON.stringify(child.result)}`,
          );
        if (child.parent?.id !== parent.id || child.parent?.step !== "child")
          problems.push(`child ${childId} links ${JSON.stringify(child.parent)}`);
        const resumed = linesOf(stack, parent.id, "resumed").length;
        if (resumed !== 1) problems.push(`parent ${parent.id} got past its invoke ${resumed} times`);
        const steps = ((await stack.call("GET", `/jobs/${parent.id}/steps`)).body.steps ?? []) as Json[];
        const listed = steps.map((s) => `${s.name}:${s.type}:${s.child === childId}`);
        if (listed.join(",") !== "child:child:true") problems.push(`parent ${parent.id}'s steps ${listed}`);
      }
      // No other child was ever started: one per parent, however often the parents ran.
      const started = new Set(stack.observerLog().map((l) => l.jobId));
      expect([...started].sort()).toEqual([...children].sort());
      expect(problems).toEqual([]);
      report("children-kill", {
        parents: parents.length,
        childRuns: health.runs,
        childReruns: health.reruns,
        settledAfterRestartMs: Date.now() - restartedAt,
      });
    });
  }, 120_000);

  it("the stack SIGKILLed just after a race's first branch arrived: that branch wins once, the late loser is refused", async () => {
    await onStack("race-kill", async (stack) => {
      const orders = times(6, (i) => `o-${i}`);
      const ids = await stack.enqueueMany(orders.map((order) => ({ kind: RACER, payload: { order } })));
      await allWaiting(stack, ids, "any");
      const tokens = await Promise.all(
        ids.map(async (id) => {
          const steps = (await stack.call("GET", `/jobs/${id}/steps`)).body.steps as Json[];
          return steps.find((s) => s.name === "approval")?.result as { id: string; url: string };
        }),
      );
      // Jobs 0..2: the token comes first; 3..5: the event. The kill follows the answers at once, so
      // it lands while the woken runs meet the race (a token's win and its loser's cancel are theirs).
      const tokenFirst = (i: number) => i < 3;
      const event = (i: number) => ({ name: SHIPPED, match: orders[i], data: { i } });
      const first = await allAtOnce(
        ids.map(
          (_, i) => async () =>
            tokenFirst(i)
              ? completeToken(stack, tokens[i]?.url ?? "", { i })
              : stack.call("POST", "/events", event(i)),
        ),
      );
      const answeredAt = Date.now();
      const { deadAt } = await stack.killAll();
      await stack.restart();
      const restartedAt = Date.now();
      for (const [i, answer] of first.entries())
        expect(answer, `job ${i}'s first branch`).toMatchObject(
          tokenFirst(i) ? { status: 200, body: { resumed: true } } : { status: 202, body: { resumed: 1 } },
        );

      // The other branch arrives late, after the restart, while the woken runs may not have met the
      // race yet: it resumes nothing, and a losing token is refused.
      const late = await allAtOnce(
        ids.map(
          (_, i) => async () =>
            tokenFirst(i)
              ? stack.call("POST", "/events", event(i))
              : completeToken(stack, tokens[i]?.url ?? "", { late: true }),
        ),
      );
      for (const [i, answer] of late.entries())
        expect(answer, `job ${i}'s late branch`).toMatchObject(
          tokenFirst(i) ? { status: 202, body: { resumed: 0 } } : { status: 409 },
        );

      const views = await allEnded(stack, ids);
      const problems: string[] = [];
      for (const [i, view] of views.entries()) {
        const winner = tokenFirst(i) ? "approved" : "shipped";
        if (view.status !== "done" || doneEntries(view) !== 1)
          problems.push(
            `job ${i} ended ${view.status}, done ${doneEntries(view)} times (${view.lastError ?? ""})`,
          );
        if (JSON.stringify(view.result) !== JSON.stringify({ order: orders[i], won: winner, data: { i } }))
          problems.push(`job ${i}'s result ${JSON.stringify(view.result)}`);
        const won = linesOf(stack, view.id, "won").map((l) => l.branch);
        if (won.length === 0 || won.some((b) => b !== winner))
          problems.push(`job ${i}'s runs saw the race won by ${won.join(", ") || "nothing"}`);
        if (!tokenFirst(i)) {
          const token = (await stack.call("GET", `/tokens/${tokens[i]?.id}`)).body;
          if (token.status !== "cancelled") problems.push(`job ${i}'s losing token is ${token.status}`);
        }
      }
      expect(problems).toEqual([]);
      // Once the jobs ended the losers stay refused: the token answers 409, the event resumes nothing.
      for (const [i] of ids.entries()) {
        const again = tokenFirst(i)
          ? await stack.call("POST", "/events", event(i))
          : await completeToken(stack, tokens[i]?.url ?? "", { again: true });
        expect(again).toMatchObject(tokenFirst(i) ? { status: 202, body: { resumed: 0 } } : { status: 409 });
      }
      report("race-kill", {
        jobs: ids.length,
        runs: readJournal(stack).filter((l) => l.at === "begin").length,
        killLandedMsAfterAnswers: deadAt - answeredAt,
        settledAfterRestartMs: Date.now() - restartedAt,
      });
    });
  }, 120_000);
});
