import { describe, expect, it } from "vitest";
import * as z from "zod";
import { defineUnboundKind } from "../../lib/job/kind.ts";
import type { StoreContext } from "../../lib/store/context.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import { INLINE_STEPS_BYTES, inlineStepBytes } from "../../lib/store/step-record.ts";
import { OffsetClock } from "../support/clock.ts";
import { harnessPerTest, settled } from "../support/engine-harness.ts";

/**
 * Durable calls side by side (docs/architecture.md §22). A sleep beside a step (Suspend): the
 * suspend waits for the step in flight to settle and be recorded, so its function runs once per job;
 * a step in flight that throws fails the attempt as any step's error does. Steps side by side hold
 * the item's inline budget together (Steps). On the real emulators; SQS's 1 s delay of the sleep's
 * wake-up is the only real wait.
 */
const calls: string[] = [];
/** Runs that saw their own job suspended while their step was still in flight. */
const sawSuspended: string[] = [];
let store: StoreContext | undefined;

/**
 * Keeps a step in flight for a bounded number of looks at its job (not a wait on the clock): a run
 * that suspends meanwhile is seen, as its finalize lands within a look or two.
 */
async function holdInFlight(jobId: string, user: string): Promise<void> {
  for (let look = 0; look < 30; look++) {
    const item = store ? await getJob(store, jobId) : undefined;
    if (item?.waiting) {
      sawSuspended.push(user);
      return;
    }
  }
}

const Input = z.object({ user: z.string(), fail: z.boolean().optional() });

const kinds = [
  defineUnboundKind({
    name: "t-sleep-beside-step",
    queue: "default",
    payload: Input,
    maxAttempts: 1,
    timeoutSeconds: 30,
    handler: async ({ user, fail }, ctx) => {
      const [, charged] = await Promise.all([
        ctx.sleep("nap", 1),
        ctx.step("charge", async () => {
          calls.push(user);
          await holdInFlight(ctx.job.id, user);
          if (fail) throw new Error("card declined");
          return "charged";
        }),
      ]);
      return charged;
    },
  }),
  defineUnboundKind({
    name: "t-wide-steps",
    queue: "default",
    payload: z.object({ steps: z.number(), bytes: z.number() }),
    maxAttempts: 1,
    timeoutSeconds: 30,
    handler: async ({ steps, bytes }, ctx) => {
      const names = Array.from({ length: steps }, (_, i) => `part-${i}`);
      const parts = await Promise.all(names.map((name) => ctx.step(name, async () => "p".repeat(bytes))));
      return parts.reduce((sum, part) => sum + part.length, 0);
    },
  }),
];

const harness = harnessPerTest();

describe("a sleep side by side with a step", () => {
  it("the suspend waits for the step in flight: its function runs once, its record kept across the wake", async () => {
    const h = await harness.create({ clock: new OffsetClock(), extraKinds: kinds });
    store = h.engine.store;
    h.startPoller();
    const { job } = await h.engine.producer.enqueue({ kind: "t-sleep-beside-step", payload: { user: "c1" } });
    const done = await settled(h, job.id, "done");
    expect(JSON.parse(done.result ?? "")).toBe("charged");
    expect(calls.filter((u) => u === "c1")).toEqual(["c1"]);
    expect(sawSuspended).not.toContain("c1");
    expect(Object.keys(done.steps ?? {}).sort()).toEqual(["charge", "nap"]);
    // Recorded by the run that slept, not after the wake.
    expect(done.steps?.charge?.t ?? Infinity).toBeLessThan(done.steps?.nap?.until ?? 0);
  });

  it("a step in flight that throws fails the attempt with its error; the sleep is not recorded", async () => {
    const h = await harness.create({ clock: new OffsetClock(), extraKinds: kinds });
    store = h.engine.store;
    h.startPoller();
    const { job } = await h.engine.producer.enqueue({
      kind: "t-sleep-beside-step",
      payload: { user: "c2", fail: true },
    });
    const dead = await settled(h, job.id, "dead");
    expect(dead.lastError ?? "").toContain("card declined");
    expect(calls.filter((u) => u === "c2")).toEqual(["c2"]);
    expect(dead.steps?.nap).toBeUndefined();
  });
});

describe("steps side by side", () => {
  it("hold the item's inline budget together: past 32 KiB their results go to the claims bucket", async () => {
    const h = await harness.create({ clock: new OffsetClock(), extraKinds: kinds });
    h.startPoller();
    // 40 results of 3 000 bytes: each under the 8 KiB claim check, together 120 000 bytes.
    const { job } = await h.engine.producer.enqueue({
      kind: "t-wide-steps",
      payload: { steps: 40, bytes: 3000 },
    });
    const done = await settled(h, job.id, "done");
    expect(JSON.parse(done.result ?? "")).toBe(120_000);
    const records = Object.values(done.steps ?? {});
    expect(records).toHaveLength(40);
    expect(inlineStepBytes(done.steps)).toBeLessThanOrEqual(INLINE_STEPS_BYTES);
    // Each within the budget stays inline; the rest are objects.
    const inline = records.filter((r) => r.v !== undefined).length;
    expect(inline).toBe(Math.floor(INLINE_STEPS_BYTES / 3002));
    expect(records.filter((r) => r.o !== undefined)).toHaveLength(40 - inline);
  });
});
