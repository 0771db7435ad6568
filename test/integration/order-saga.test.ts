import { describe, expect, it } from "vitest";
import { runReaper } from "../../lib/ops/reaper.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import { OffsetClock } from "../support/clock.ts";
import { harnessPerTest, settled } from "../support/engine-harness.ts";
import { waitFor } from "../support/wait.ts";

/**
 * The demo kind order-saga (app/kinds/order-saga.ts) on the emulators: its ctx.map of one step per
 * item, its ctx.invoke of echo, and its race between order.shipped and a 30 s timer.
 */
const harness = harnessPerTest();

describe("order-saga", () => {
  it("reserves every item, awaits its echo child, and ends shipped when order.shipped comes first", async () => {
    const h = await harness.create({ clock: new OffsetClock() });
    h.startPoller();
    const order = `o-${Date.now()}`;
    const { job } = await h.engine.producer.enqueue({ kind: "order-saga", payload: { order, items: 12 } });
    await waitFor(async () => (await getJob(h.engine.store, job.id))?.waiting?.for === "any", "the race");
    expect(
      await h.engine.durable.deliverEvent({ name: "order.shipped", match: order, data: { by: "post" } }),
    ).toMatchObject({ resumed: 1 });
    const done = await settled(h, job.id, "done");
    expect(JSON.parse(done.result ?? "null")).toEqual({
      order,
      items: 12,
      shipped: true,
      echo: { order, reserved: 12 },
    });
    const names = Object.keys(done.steps ?? {});
    expect(names.filter((n) => n.startsWith("reserve[")).sort()).toHaveLength(12);
    expect(names).toEqual(expect.arrayContaining(["echo", "shipping"]));
  });

  it("an item that fails on the first attempt is run again alone, and the timer ends the race unshipped", async () => {
    const clock = new OffsetClock();
    const h = await harness.create({ clock });
    h.startPoller();
    const order = `o-${Date.now()}`;
    const { job } = await h.engine.producer.enqueue({
      kind: "order-saga",
      payload: { order, items: 8, failAt: 5 },
    });
    await waitFor(
      async () => (await getJob(h.engine.store, job.id))?.waiting?.for === "any",
      "the race",
      30_000,
    );
    const waiting = await getJob(h.engine.store, job.id);
    // Every item's step ran on the first attempt but item 5's, recorded then; the retry ran it alone.
    const attempts = Object.entries(waiting?.steps ?? {})
      .filter(([name]) => name.startsWith("reserve["))
      .map(([name, r]) => [name, r.a] as const)
      .sort();
    expect(attempts).toEqual(
      Array.from({ length: 8 }, (_, i) => [`reserve[${i}]`, i === 5 ? 2 : 1] as const).sort(),
    );
    clock.advance(31_000);
    await runReaper(h.engine);
    const done = await settled(h, job.id, "done");
    expect(JSON.parse(done.result ?? "null")).toMatchObject({ order, items: 8, shipped: false });
  }, 60_000);
});
