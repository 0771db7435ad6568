import { expect, it } from "vitest";
import { claim } from "../../lib/store/lease-ops.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import { seedFromMessage } from "../../lib/transport/job-message.ts";
import { messageFromItem } from "../../lib/transport/message-from-item.ts";
import { ManualClock } from "../support/clock.ts";
import { harnessPerTest } from "../support/engine-harness.ts";

/**
 * A takeover is two writes and, on dynalite, a read between them. On a loaded store they take a
 * while; the new run's lease must count from its own write, or the run starts with part of its
 * lease already gone and its heartbeat's deadline stops it within the first renewal (the crash
 * window's fault scenario under load lost most of its default jobs that way).
 */
const harness = harnessPerTest();

it("a takeover's lease counts from its own write, however long the store took before it", async () => {
  const clock = new ManualClock(Date.now());
  const h = await harness.create({ clock });
  const { job } = await h.engine.producer.enqueue({ kind: "echo", payload: 1 });
  const item = await getJob(h.engine.store, job.id);
  if (!item) throw new Error("no item");
  const seed = seedFromMessage(messageFromItem(item, item.payload));
  expect((await claim(h.engine.store, seed, "lapsed", 3000)).claimed).toBe(true);
  clock.advance(4000);
  // Every request of the takeover takes 700 ms by the engine's clock.
  h.engine.store.doc.middlewareStack.add(
    (next) => async (args) => {
      clock.advance(700);
      return next(args);
    },
    { step: "initialize", name: "slow-store" },
  );
  const taken = await claim(h.engine.store, seed, "next", 3000);
  expect(taken.claimed).toBe(true);
  const leaseUntil = taken.claimed ? (taken.item.leaseUntil ?? 0) : 0;
  // At least the lease from the takeover's write on (that write's own 700 ms aside).
  expect(leaseUntil - clock.now()).toBeGreaterThanOrEqual(3000 - 700);
});
