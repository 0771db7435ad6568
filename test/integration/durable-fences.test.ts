import { describe, expect, it } from "vitest";
import * as z from "zod";
import { defineUnboundKind } from "../../lib/job/kind.ts";
import { outgoingJob } from "../../lib/ops/promote.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import { recordStep } from "../../lib/store/step-ops.ts";
import { OffsetClock } from "../support/clock.ts";
import { harnessPerTest, settled } from "../support/engine-harness.ts";
import { deferred, waitFor } from "../support/wait.ts";

/**
 * A durable step's function runs once per job across what can happen between steps
 * (docs/architecture.md §22): a run that may have lost its lease records nothing and runs no more
 * steps; a duplicate delivery of a running job runs nothing. Each step's function appends to a
 * journal, the external effect the fence protects.
 */
const journal: string[] = [];
const gates = new Map<string, ReturnType<typeof deferred<void>>>();
const gateOf = (id: string) => {
  if (!gates.has(id)) gates.set(id, deferred<void>());
  return gates.get(id) as ReturnType<typeof deferred<void>>;
};
const atGate = new Set<string>();

const gated = defineUnboundKind({
  name: "t-gated",
  queue: "default",
  payload: z.object({}),
  maxAttempts: 5,
  timeoutSeconds: 60,
  handler: async (_p, ctx) => {
    await ctx.step("one", () => journal.push(`${ctx.job.id}:one`));
    atGate.add(ctx.job.id);
    await gateOf(ctx.job.id).promise;
    await ctx.step("two", () => journal.push(`${ctx.job.id}:two`));
    return "ok";
  },
});

const harness = harnessPerTest();
const linesOf = (id: string) => journal.filter((l) => l.startsWith(`${id}:`));

describe("durable steps under their fence", () => {
  it("a run whose lease ran out records nothing more; the next run replays and runs each step once", async () => {
    const clock = new OffsetClock();
    const h = await harness.create({ clock, extraKinds: [gated] });
    h.startPoller();
    const { job } = await h.engine.producer.enqueue({ kind: "t-gated", payload: {} });
    await waitFor(async () => atGate.has(job.id), "the run to reach its gate");
    const running = await getJob(h.engine.store, job.id);
    // The lease runs out on the engine's clock (as after a freeze): the run must not go on.
    clock.advance(h.queue.leaseSeconds * 1000 + 1000);
    // The store refuses a lapsed lease's record too, even before anyone took the job over.
    const stale = await recordStep(
      h.engine.store,
      job.id,
      running?.leaseToken ?? "",
      "x",
      { n: 9, a: 1, t: 0 },
      true,
    );
    expect(stale).toEqual({ recorded: false, reason: "lease_lost" });
    gateOf(job.id).resolve();
    const done = await settled(h, job.id, "done");
    expect(linesOf(job.id)).toEqual([`${job.id}:one`, `${job.id}:two`]);
    expect(Object.keys(done.steps ?? {}).sort()).toEqual(["one", "two"]);
    expect(done.attempts).toBe(2);
  });

  it("a duplicate delivery of a running job runs no step", async () => {
    const clock = new OffsetClock();
    const h = await harness.create({ clock, extraKinds: [gated] });
    h.startPoller();
    const { job } = await h.engine.producer.enqueue({ kind: "t-gated", payload: {} });
    await waitFor(async () => atGate.has(job.id), "the run to reach its gate");
    const item = await getJob(h.engine.store, job.id);
    if (!item) throw new Error("no item");
    await h.engine.transport.send(await outgoingJob(h.engine, item));
    await waitFor(async () => h.metrics.total("duplicateDeliveries") >= 1, "the duplicate to be deferred");
    gateOf(job.id).resolve();
    const done = await settled(h, job.id, "done");
    expect(done.attempts).toBe(1);
    expect(linesOf(job.id)).toEqual([`${job.id}:one`, `${job.id}:two`]);
  });
});
