import { describe, expect, it } from "vitest";
import { kindBuilder, type UnboundApp } from "../../lib/declarations/define-app.ts";
import { ClientError } from "../../lib/errors.ts";
import type { AnyKind } from "../../lib/job/kind.ts";
import { awaitsLoad } from "../../lib/job/kind-loading.ts";
import { buildRegistry } from "../../lib/job/registry.ts";
import type { BatchResultItem } from "../../lib/job/schemas.ts";
import { validateEnqueue } from "../../lib/producer/validate.ts";
import { OffsetClock } from "../support/clock.ts";
import { type Harness, harnessPerTest, settled } from "../support/engine-harness.ts";
import { kindOnDefaultQueue } from "../support/test-kinds.ts";

/**
 * Kinds whose schema and handler load on first use (docs/architecture.md §13, lib/job/kind-loading.ts),
 * on the emulators: the module loads when a job of the kind first needs it, once; a module that
 * throws while loading fails that job's attempt with an error naming the kind and the module, the
 * worker keeps running other kinds, and the next job of the kind tries the load again.
 */
const defineKind = kindBuilder<UnboundApp>();
const limits = {
  queue: "default",
  maxAttempts: 2,
  timeoutSeconds: 30,
  backoff: { baseSeconds: 1, maxSeconds: 1 },
};

let brokenLoads = 0;
let flakyLoads = 0;
const kinds = () => {
  brokenLoads = 0;
  flakyLoads = 0;
  return [
    defineKind({
      name: "lazy-echo",
      ...limits,
      load: () => import("../support/lazy-kinds/lazy-echo.job.ts"),
    }),
    defineKind({
      name: "lazy-broken",
      ...limits,
      load: () => {
        brokenLoads++;
        return import("../support/lazy-kinds/broken.job.ts");
      },
    }),
    // Its first load fails (a module that reads a file not yet there, say), the next ones succeed.
    defineKind({
      name: "lazy-flaky-load",
      ...limits,
      load: async () => {
        flakyLoads++;
        if (flakyLoads === 1) throw new Error("the first load failed");
        return import("../support/lazy-kinds/lazy-echo.job.ts");
      },
    }),
  ] as AnyKind[];
};

/** A job of a kind whose module can't load at enqueue: checked against an eager twin, as another function would have. */
function checkedByTwin(name: string, queues: Harness["engine"]["queues"], payload: unknown = {}) {
  const twin = buildRegistry([
    kindOnDefaultQueue(name, { maxAttempts: 2, timeoutSeconds: 30 }, async () => 1),
  ]);
  return { valid: validateEnqueue({ kind: name, payload }, twin, queues) };
}

/** The id of a job enqueueChecked accepted. */
function idOf(result: BatchResultItem | undefined): string {
  if (!result || !("id" in result)) throw new Error(`not enqueued: ${JSON.stringify(result)}`);
  return result.id as string;
}

const harness = harnessPerTest();

describe("kinds loaded on first use", () => {
  it("loads a kind's module when its first job is enqueued, once, and checks its payload with it", async () => {
    const extra = kinds();
    const lazyEcho = extra[0] as AnyKind;
    const h = await harness.create({ clock: new OffsetClock(), extraKinds: extra });
    expect(awaitsLoad(lazyEcho)).toBe(true);
    await expect(h.engine.producer.enqueue({ kind: "lazy-echo", payload: { word: 1 } })).rejects.toThrow(
      ClientError,
    );
    expect(awaitsLoad(lazyEcho)).toBe(false);
    h.startPoller();
    const { job } = await h.engine.producer.enqueue({ kind: "lazy-echo", payload: { word: "hi" } });
    expect((await settled(h, job.id, "done")).result).toBe(JSON.stringify({ echoed: "hi" }));
    const { evaluations } = await import("../support/lazy-kinds/lazy-echo.job.ts");
    expect(evaluations.count).toBe(1);
  });

  it("a module that throws while loading fails that job's attempt, naming kind and module; other kinds run; the next job tries again", async () => {
    const h = await harness.create({ clock: new OffsetClock(), extraKinds: kinds(), random: () => 0 });
    // The enqueue loads the module too, and refuses with the same error: nothing is written.
    await expect(h.engine.producer.enqueue({ kind: "lazy-broken", payload: {} })).rejects.toThrow(
      /kind "lazy-broken": its module ".*broken\.job\.ts" failed to load: Error: the module broke at import/,
    );
    const loadsAtEnqueue = brokenLoads;
    const [broken] = await h.engine.producer.enqueueChecked([checkedByTwin("lazy-broken", h.engine.queues)]);
    const brokenId = idOf(broken);
    h.startPoller();
    const echo = await h.engine.producer.enqueue({ kind: "echo", payload: { after: "broken" } });
    const dead = await settled(h, brokenId, "dead");
    // Each of its two attempts tried the load, and each failed with the same named error.
    expect(dead.lastError).toMatch(
      /^kind "lazy-broken": its module ".*broken\.job\.ts" failed to load: Error: the module broke/,
    );
    expect(dead.history?.map((r) => r.o)).toEqual(["retry", "dead"]);
    expect(brokenLoads - loadsAtEnqueue).toBe(2);
    await settled(h, echo.job.id, "done");
  });

  it("a load that failed is not kept: the next job of the kind loads its module and runs", async () => {
    const h = await harness.create({ clock: new OffsetClock(), extraKinds: kinds(), random: () => 0 });
    const [first] = await h.engine.producer.enqueueChecked([
      checkedByTwin("lazy-flaky-load", h.engine.queues, { word: "again" }),
    ]);
    h.startPoller();
    const firstId = idOf(first);
    // The first attempt's load fails; its retry loads the module and runs.
    const done = await settled(h, firstId, "done");
    // Its history: the failed attempt, with the load's error (a success adds none).
    expect(done.history?.map((r) => [r.a, r.o])).toEqual([[1, "retry"]]);
    expect(done.history?.[0]?.x).toMatch(
      /^kind "lazy-flaky-load": its module .* failed to load: Error: the first load failed/,
    );
    expect(done.attempts).toBe(2);
    expect(done.result).toBe(JSON.stringify({ echoed: "again" }));
    expect(flakyLoads).toBe(2);
  });
});
