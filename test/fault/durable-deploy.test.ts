import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { addKind } from "../support/project-copy.ts";
import { waitFor } from "../support/wait.ts";
import { type FaultStack, faultScenarios, type Json } from "./support.ts";

/**
 * A deploy under suspended durable jobs (docs/guide/durable-jobs.md, "Changing a durable kind
 * safely"): `npm start` in a project copy runs two durable kinds; jobs of both sleep; the whole stack
 * is killed, the kinds' file rewritten (the new code), and the stack started again on the same data,
 * as a deploy replaces a stage's code. `deploy-reorder`'s new code calls a step before the sleep the
 * jobs recorded: they end paused with a NonDeterminismError, never a result from the wrong records.
 * `deploy-branch`'s new code asks `ctx.version` first: the sleeping job finishes on its old branch,
 * and a job enqueued after the deploy takes the new one.
 */
const FILE = "deploy-durable.ts";
const SLEEP_SECONDS = 4;

const kindsOf = (reordered: boolean) => `import * as z from "zod";
import { defineKind } from "../define.ts";

const payload = z.object({ n: z.number().int() });

export const deployReorder = defineKind({
  name: "deploy-reorder",
  payload,
  queue: "default",
  maxAttempts: 3,
  timeoutSeconds: 30,
  handler: async ({ n }, ctx) => {
    const a = await ctx.step("a", () => n);
${
  reordered
    ? `    const b = await ctx.step("b", () => "new");
    await ctx.sleep("nap", ${SLEEP_SECONDS});`
    : `    await ctx.sleep("nap", ${SLEEP_SECONDS});
    const b = await ctx.step("b", () => "old");`
}
    return { a, b };
  },
});

export const deployBranch = defineKind({
  name: "deploy-branch",
  payload,
  queue: "default",
  maxAttempts: 3,
  timeoutSeconds: 30,
  version: "${reordered ? "v2" : "v1"}",
  handler: async ({ n }, ctx) => {
    const a = await ctx.step("a", () => n);
${
  reordered
    ? `    const branch = await ctx.version("charge-v2", [1, 2]);
    await ctx.sleep("nap", ${SLEEP_SECONDS});
    const b = branch === 1 ? await ctx.step("b", () => "old") : await ctx.step("b2", () => "new");`
    : `    await ctx.sleep("nap", ${SLEEP_SECONDS});
    const b = await ctx.step("b", () => "old");`
}
    return { a, b };
  },
});
`;

const onStack = faultScenarios((copy) => {
  addKind(copy, FILE, "deployReorder", kindsOf(false));
  addKind(copy, FILE, "deployBranch", kindsOf(false));
});

const statusOf = async (stack: FaultStack, id: string) => (await stack.call("GET", `/jobs/${id}`)).body;

const untilStatus = (stack: FaultStack, id: string, status: string) =>
  waitFor(
    async () => {
      const job = await statusOf(stack, id);
      return job.status === status && job;
    },
    `job ${id} to be ${status}`,
    60_000,
    200,
  );

describe("a deploy under sleeping durable jobs, on npm start", () => {
  it("a reordered step pauses its jobs with NonDeterminismError; a ctx.version branch lets old and new runs both finish", async () => {
    await onStack("durable-deploy", async (stack) => {
      const enqueue = async (kind: string, n: number) =>
        (await stack.call("POST", "/jobs", { kind, payload: { n } })).body.id as string;
      const reorder = await enqueue("deploy-reorder", 1);
      const branch = await enqueue("deploy-branch", 2);
      for (const id of [reorder, branch])
        await waitFor(
          async () => (await statusOf(stack, id)).waiting?.for === "sleep",
          `job ${id} to sleep`,
          30_000,
          50,
        );
      const counted = await stack.call("GET", "/jobs?waiting=true");
      expect(counted.body.waiting).toContainEqual({
        queue: "default",
        kind: "deploy-branch",
        version: "v1",
        jobs: 1,
      });
      // The deploy: the stack down before the sleeps end, the new code in, the stack up again.
      await stack.killAll();
      writeFileSync(join(stack.copy.dir, "app/kinds", FILE), kindsOf(true));
      await stack.restart();

      const paused = await untilStatus(stack, reorder, "paused");
      expect(paused.lastError).toBe(
        `job ${reorder}: step "b" is new at place 2 of the handler's calls, where the journal has "nap": the handler no longer matches the job's journal, so the job is paused`,
      );
      expect(paused.result).toBeUndefined();
      const steps = (await stack.call("GET", `/jobs/${reorder}/steps`)).body.steps as Json[];
      expect(steps.map((s) => s.name)).toEqual(["a", "nap"]);

      const old = await untilStatus(stack, branch, "done");
      expect(old.result).toEqual({ a: 2, b: "old" });
      expect(old.version).toBe("v1");
      const fresh = await enqueue("deploy-branch", 3);
      const done = await untilStatus(stack, fresh, "done");
      expect(done.result).toEqual({ a: 3, b: "new" });
      expect(done.version).toBe("v2");

      const doctor = await stack.call("GET", "/jobs?status=paused&view=summary");
      expect((doctor.body.items as Json[]).map((j) => j.id)).toEqual([reorder]);
    });
  }, 180_000);
});
