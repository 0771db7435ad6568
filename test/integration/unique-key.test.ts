import { describe, expect, it } from "vitest";
import { ClientError } from "../../lib/errors.ts";
import { acquireUniqueLock } from "../../lib/store/enqueue-ops.ts";
import { cancel } from "../../lib/store/finalize-ops.ts";
import { ManualClock } from "../support/clock.ts";
import { harnessPerTest } from "../support/engine-harness.ts";

const harness = harnessPerTest();

describe("uniqueKey dedupe through the producer", () => {
  it("answers the live job while it is not terminal, and a new job once it is", async () => {
    const clock = new ManualClock();
    const h = await harness.create({ clock });
    const request = { kind: "echo", payload: 1, uniqueKey: "nightly" };
    const first = await h.engine.producer.enqueue(request);
    const again = await h.engine.producer.enqueue(request);
    expect(again).toMatchObject({ duplicate: true, job: { id: first.job.id, status: "queued" } });

    await cancel(h.engine.store, first.job.id, 0);
    const next = await h.engine.producer.enqueue(request);
    expect(next.duplicate).toBe(false);
    expect(next.job.id).not.toBe(first.job.id);
  });

  it("does not hand the key to a new job while the holder's delayed message may still run", async () => {
    const clock = new ManualClock();
    const h = await harness.create({ clock });
    // An enqueue that sent a 10-minute delayed message, then died before writing its item.
    const now = clock.now();
    await acquireUniqueLock(h.engine.store, "default", "k", "ghost", 0, now + 600_000);

    clock.advance(120_000);
    const early = h.engine.producer.enqueue({ kind: "echo", uniqueKey: "k" });
    await expect(early).rejects.toBeInstanceOf(ClientError);
    await expect(early).rejects.toMatchObject({ code: "conflict" });

    clock.advance(600_000); // past the ghost's runAt plus the grace period
    const later = await h.engine.producer.enqueue({ kind: "echo", uniqueKey: "k" });
    expect(later.duplicate).toBe(false);
    expect(later.job.id).not.toBe("ghost");
  });
});
