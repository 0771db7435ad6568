import { describe, expect, it } from "vitest";
import { putJob } from "../../lib/store/enqueue-ops.ts";
import { finalize } from "../../lib/store/finalize-ops.ts";
import { claim, heartbeat } from "../../lib/store/lease-ops.ts";
import { recordStep } from "../../lib/store/step-ops.ts";
import { seedOf } from "../support/jobs.ts";
import { claimed, jobItem, LEASE_MS, onEveryBackend } from "../support/store-conformance.ts";

/**
 * The fence is the lease token alone (docs/architecture.md, conventions and §4): every write after a
 * claim compares the token, never the attempt, and the attempt can't tell two runs apart. A run
 * handed back (or a durable run that suspended) gives its attempt back, so the next run of the job
 * has the same attempt and only its token differs. test/unit/fence-docs.test.ts keeps the texts
 * that define the word to this.
 */
onEveryBackend(({ setup }) => {
  describe("the fence", () => {
    it("is the token: the run after a hand-back has the same attempt, and the first run's token writes nothing", async () => {
      const { store, clock } = await setup();
      const item = jobItem(clock);
      await putJob(store, item);
      const first = claimed(await claim(store, seedOf(item), "tok-first", LEASE_MS));
      const handedBack = await finalize(store, first, "tok-first", {
        outcome: "released",
        runAt: clock.now(),
      });
      expect(handedBack.finalized).toBe(true);
      const second = claimed(await claim(store, seedOf(item), "tok-second", LEASE_MS));
      expect(second.attempts).toBe(first.attempts);

      const step = { n: 1, a: second.attempts, t: clock.now() };
      expect(await heartbeat(store, item.id, "tok-first", LEASE_MS)).toEqual({ held: false });
      expect(await recordStep(store, item.id, "tok-first", "s", step, false)).toMatchObject({
        recorded: false,
        reason: "lease_lost",
      });
      expect((await recordStep(store, item.id, "tok-second", "s", step, false)).recorded).toBe(true);
    });
  });
});
