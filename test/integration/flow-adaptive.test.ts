import { describe, expect, it, vi } from "vitest";
import * as z from "zod";
import { RetryAfterError, ThrottledError } from "../../lib/errors.ts";
import { flowKey } from "../../lib/job/flow-key.ts";
import { defineUnboundKind } from "../../lib/job/kind.ts";
import { readFlowKeyState } from "../../lib/store/flow-key-ops.ts";
import type { JobMessage } from "../../lib/transport/job-message.ts";
import { ManualClock, OffsetClock } from "../support/clock.ts";
import { harnessPerTest, settled } from "../support/engine-harness.ts";
import { waitFor } from "../support/wait.ts";

/**
 * Limits that adapt (docs/guide/flow-control.md): a handler's RetryAfterError or ThrottledError
 * naming a flow limit cools that limit's key, not the kind's first; an adaptive rate halves and
 * climbs back a step per good run; the gate spaces starts at the rate in force; GET /keys/{kind}/{key}
 * says the rate in force and why. On the real emulators.
 */
const Call = z.object({ tenant: z.string(), answer: z.enum(["ok", "429", "503"]).default("ok") });
const answered = new Set<string>();
const partner = defineUnboundKind({
  name: "t-partner",
  queue: "default",
  payload: Call,
  maxAttempts: 3,
  timeoutSeconds: 30,
  flow: [
    { name: "tenant", key: (p) => p.tenant, concurrency: 2 },
    { name: "api", key: () => "api", rate: { limit: 60, periodSeconds: 60, burst: 1, adaptive: true } },
  ],
  handler: async (p, ctx) => {
    // The partner refuses a job's first call only, with the answer the payload asks for.
    if (p.answer !== "ok" && !answered.has(ctx.job.id)) {
      answered.add(ctx.job.id);
      if (p.answer === "429")
        throw new RetryAfterError(1, { limit: "api", message: "429 Too Many Requests" });
      throw new ThrottledError(1, { limit: "api", message: "503 Slow Down" });
    }
    return { tenant: p.tenant };
  },
});
const api = flowKey("t-partner", "api", "api");
const tenantKey = (tenant: string) => flowKey("t-partner", tenant);
const harness = harnessPerTest();

describe("limits that adapt to a partner's back-pressure", () => {
  it("halves the named limit's rate, spaces starts at the rate in force, and climbs back a step per good run", async () => {
    const clock = new ManualClock();
    const h = await harness.create({ clock, extraKinds: [partner] });
    const sends = vi.spyOn(h.engine.transport, "send");
    const message = (id: string): JobMessage => ({
      v: 3,
      id,
      kind: "t-partner",
      queue: "default",
      runAt: clock.now(),
      maxAttempts: 3,
      priority: "normal",
      createdAt: clock.now(),
      flowKey: "acme",
      flowKeys: { api: "api" },
    });
    const throttled = message("01JADAPT000000000000000001");
    expect(
      await h.engine.flow.coolKey(throttled, clock.now(), {
        delaySeconds: 2,
        limit: "api",
        reason: "503 Slow Down",
      }),
    ).toBe(true);
    // The api key cooled and halved; the tenant key (the kind's first limit) did not cool.
    const state = await readFlowKeyState(h.engine.store, api);
    expect(state.coolUntil).toBe(clock.now() + 2000);
    expect(state.adaptedRate).toMatchObject({ current: 30, since: clock.now() });
    expect((await readFlowKeyState(h.engine.store, tenantKey("acme"))).coolUntil).toBeUndefined();
    const view = await h.engine.flow.keyView("t-partner", "api", "api");
    expect(view.rate).toMatchObject({
      limit: 60,
      adaptive: true,
      inForce: { limit: 30, reason: expect.stringContaining("503 Slow Down") },
    });
    expect(view.rate?.inForce?.reason).toContain(throttled.id);

    // After the cool-down, two starts at once: the second waits 2 s (30 a minute), not 1 s (60).
    clock.advance(2000);
    sends.mockClear();
    const hide = async () => expect.unreachable("nothing hides here");
    const first = await h.engine.flow.gate(message("01JADAPT000000000000000002"), hide);
    expect(typeof first).not.toBe("boolean");
    expect(await h.engine.flow.gate(message("01JADAPT000000000000000003"), hide)).toBe(true);
    expect(sends.mock.calls.map(([s]) => s.delaySeconds)).toEqual([2]);

    // A good run climbs 30 → 33 (a twentieth of 60); a second run that read 30 doesn't climb again.
    const pass = first as Exclude<typeof first, boolean>;
    expect(pass.adapted).toEqual([{ key: api, limit: "api", current: 30 }]);
    await h.engine.flow.learnFromRun(pass, message("01JADAPT000000000000000002"), clock.now(), {
      done: true,
    });
    await h.engine.flow.learnFromRun(pass, message("01JADAPT000000000000000002"), clock.now(), {
      done: true,
    });
    expect((await readFlowKeyState(h.engine.store, api)).adaptedRate?.current).toBe(33);
    // A run that failed doesn't climb.
    const again = { adapted: [{ key: api, limit: "api", current: 33 }] };
    await h.engine.flow.learnFromRun(again, message("01JADAPT000000000000000004"), clock.now(), {
      done: false,
    });
    expect((await readFlowKeyState(h.engine.store, api)).adaptedRate?.current).toBe(33);
    // Nine more good runs, each having read the rate in force: back at the declared rate, shown as such.
    for (let current = 33; current < 60; current += 3)
      await h.engine.flow.learnFromRun(
        { adapted: [{ key: api, limit: "api", current }] },
        message("01JADAPT000000000000000005"),
        clock.now(),
        { done: true },
      );
    expect((await readFlowKeyState(h.engine.store, api)).adaptedRate).toBeUndefined();
    const whole = await h.engine.flow.keyView("t-partner", "api", "api");
    expect(whole.rate).toEqual({ limit: 60, periodSeconds: 60, burst: 1, adaptive: true });
  });

  it("a handler's RetryAfterError naming a limit cools and halves it, spends the attempt, and the retry climbs it back a step", async () => {
    const h = await harness.create({ clock: new OffsetClock(), extraKinds: [partner] });
    h.startPoller();
    const { job } = await h.engine.producer.enqueue({
      kind: "t-partner",
      payload: { tenant: "acme", answer: "429" },
    });
    const halved = await waitFor(
      async () => (await readFlowKeyState(h.engine.store, api)).adaptedRate,
      "the api key's rate to halve",
    );
    expect(halved).toMatchObject({ current: 30, reason: expect.stringContaining("429 Too Many Requests") });
    const done = await settled(h, job.id, "done");
    expect(done.attempts).toBe(2);
    // The retry's good run climbs the rate it met by one step (after its finalize: awaited).
    await waitFor(
      async () => (await readFlowKeyState(h.engine.store, api)).adaptedRate?.current === 33 || undefined,
      "the api key's rate to climb a step",
    );
    expect((await readFlowKeyState(h.engine.store, tenantKey("acme"))).coolUntil).toBeUndefined();
  });

  it("a handler's ThrottledError naming a later limit cools that limit's key, its attempt unspent", async () => {
    const h = await harness.create({ clock: new OffsetClock(), extraKinds: [partner] });
    h.startPoller();
    const { job } = await h.engine.producer.enqueue({
      kind: "t-partner",
      payload: { tenant: "acme", answer: "503" },
    });
    const done = await settled(h, job.id, "done");
    expect(done.attempts).toBe(1);
    const state = await readFlowKeyState(h.engine.store, api);
    expect(state.coolUntil).toBeGreaterThan(0);
    expect(state.adaptedRate?.reason).toContain("503 Slow Down");
    expect((await readFlowKeyState(h.engine.store, tenantKey("acme"))).coolUntil).toBeUndefined();
    expect(h.metrics.total("throttled")).toBe(1);
  });
});
