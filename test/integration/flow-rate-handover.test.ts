import { describe, expect, it, vi } from "vitest";
import * as z from "zod";
import { defineUnboundKind } from "../../lib/job/kind.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import type { JobMessage } from "../../lib/transport/job-message.ts";
import { ManualClock } from "../support/clock.ts";
import { harnessPerTest } from "../support/engine-harness.ts";

/**
 * A lone flow limit with both a concurrency and a rate (docs/guide/flow-control.md): a job parked at
 * its enqueue (its key full) never reserved a turn on the rate, so when a run's place is handed to
 * it, it still waits for its turn. Played through the real enqueue, gate and hand-over on the
 * emulators with a manual clock.
 */
const Job = z.object({ tenant: z.string() });
const paced = defineUnboundKind({
  name: "t-paced",
  queue: "default",
  payload: Job,
  maxAttempts: 1,
  timeoutSeconds: 30,
  flow: { key: (p) => p.tenant, concurrency: 1, rate: { limit: 1, periodSeconds: 10, burst: 1 } },
  handler: async () => null,
});
const harness = harnessPerTest();

describe("a lone limit with a concurrency and a rate", () => {
  it("a job handed a place from its line at enqueue still waits for its rate's turn", async () => {
    const clock = new ManualClock();
    const h = await harness.create({ clock, extraKinds: [paced] });
    const sends = vi.spyOn(h.engine.transport, "send");
    const hide = async () => expect.unreachable("nothing hides here");
    const first = await h.engine.producer.enqueue({ kind: "t-paced", payload: { tenant: "acme" } });
    const firstSent = () => sends.mock.calls[0]?.[0].message as JobMessage;
    const firstMessage = firstSent();
    expect(typeof (await h.engine.flow.gate(firstMessage, hide))).not.toBe("boolean");
    // The key's one place is held: the second job parks at its enqueue, no message sent.
    sends.mockClear();
    const second = await h.engine.producer.enqueue({ kind: "t-paced", payload: { tenant: "acme" } });
    expect((await getJob(h.engine.store, second.job.id))?.parked).toBe(true);
    expect(sends).not.toHaveBeenCalled();
    // One second later the first run ends: its place goes to the second, whose message is sent.
    clock.advance(1000);
    const ended = await getJob(h.engine.store, first.job.id);
    await h.engine.flow.leavePlace({ ...(ended as NonNullable<typeof ended>), status: "done" });
    const handedOn = firstSent();
    expect(handedOn.id).toBe(second.job.id);
    // At its gate it must wait for its turn, 10 s after the first's: sent again 9 s later.
    sends.mockClear();
    expect(await h.engine.flow.gate(handedOn, hide)).toBe(true);
    expect(sends.mock.calls.map(([s]) => s.delaySeconds)).toEqual([9]);
  });
});
