import { describe, expect, test } from "vitest";
import * as z from "zod";
import { systemClock } from "../../lib/clock.ts";
import type { CompletionContext } from "../../lib/job/kind.ts";
import { defineKind } from "../../lib/job/kind.ts";
import { getGroup } from "../../lib/store/group-read-ops.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import { harnessPerTest, settled } from "../support/engine-harness.ts";
import { waitFor } from "../support/wait.ts";

const completions: { id: string; completion: CompletionContext | undefined; payload: unknown }[] = [];
const fold = defineKind({
  name: "test-fold",
  queue: "default",
  payload: z.object({ report: z.string() }),
  maxAttempts: 3,
  timeoutSeconds: 30,
  handler: async (payload, ctx) => {
    completions.push({ id: ctx.job.id, completion: ctx.completion, payload });
    const page = await ctx.completion?.children({ limit: 100 });
    return { seen: page?.items.length ?? 0 };
  },
});

describe("job groups", () => {
  const harnesses = harnessPerTest();

  test("smoke: 30 children, one completion", async () => {
    const h = await harnesses.create({ clock: systemClock, extraKinds: [fold] });
    const { group, created } = await h.engine.groups.create({
      children: Array.from({ length: 30 }, (_, i) => ({ kind: "echo", payload: { i } })),
      onComplete: { kind: "test-fold", payload: { report: "r1" } },
    });
    expect(created).toBe(true);
    expect(group.counts.total).toBe(30);
    h.startPoller();
    const done = await waitFor(async () => {
      const g = await getGroup(h.engine.store, group.id);
      return g?.status === "succeeded" ? g : undefined;
    }, "group to succeed");
    expect(done.completionJobId).toBeDefined();
    const completion = await settled(h, done.completionJobId ?? "", "done");
    expect(JSON.parse(completion.result ?? "null")).toEqual({ seen: 30 });
    const mine = completions.filter((c) => c.id === completion.id);
    expect(mine).toHaveLength(1);
    expect(mine[0]?.completion?.counts).toMatchObject({ done: 30, dead: 0, cancelled: 0, total: 30 });
    const view = await h.engine.groups.get(group.id);
    expect(view.counts).toEqual({ total: 30, pending: 0, done: 30, dead: 0, cancelled: 0 });
    expect(await getJob(h.engine.store, completion.id)).toBeDefined();
  });
});
