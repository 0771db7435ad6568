import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { flowLimitsOf } from "../../lib/job/flow.ts";
import { defineUnboundKind } from "../../lib/job/kind.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import { ManualClock } from "../support/clock.ts";
import { harnessPerTest } from "../support/engine-harness.ts";
import { gateTimeline, inOrder } from "../support/gate-timeline.ts";

/**
 * docs/guide/flow-control.md's timeline of several limits, played through the real flow gate, the
 * real hand-over of places and the real reservations on the emulators, on a manual clock: tenant-
 * report's three limits (2 runs of a tenant at once here, 1 of a user, 20 000 tokens a minute). At
 * each time its events happen (an enqueue, a run's end), then every delivery due by then meets the
 * gate: a job that passes starts; one that doesn't waits in the line of the first limit that refused
 * it (`user`, `tenant`), or for its turn on `llm` (its message sent again, delayed until then). The
 * block is read, so it can't drift.
 */
const Report = z.object({ tenant: z.string(), user: z.string(), tokens: z.number().int() });
const report = defineUnboundKind({
  name: "timeline-report",
  queue: "default",
  payload: Report,
  maxAttempts: 1,
  timeoutSeconds: 30,
  flow: [
    { name: "tenant", key: (p) => p.tenant, concurrency: 2 },
    { name: "user", key: (p) => p.user, concurrency: 1 },
    { name: "llm", key: () => "llm", rate: { limit: 20_000, periodSeconds: 60, cost: (p) => p.tokens } },
  ],
  handler: async () => null,
});
const first = flowLimitsOf(report.flow)[0]?.name;

const docs = readFileSync(new URL("../../docs/guide/flow-control.md", import.meta.url), "utf8");
const block = docs.match(/```text timeline limits\nevents: (.*)\nstarts: (.*)\nwaits: (.*)\n```/);
const harness = harnessPerTest();

describe("docs/guide/flow-control.md's timeline of several limits", () => {
  it("is played by the real gate: each job starts once every limit admits it, and waits in the first that doesn't", async () => {
    expect(block).not.toBeNull();
    const clock = new ManualClock();
    const t0 = clock.now();
    const h = await harness.create({ clock, extraKinds: [report] });
    const ids = new Map<string, string>();
    const names = new Map<string, string>();
    const starts: [number, string][] = [];
    const waits: [number, string][] = [];
    const at = () => (clock.now() - t0) / 1000;
    const { runUntil } = gateTimeline(h, clock, async (msg) => {
      const name = names.get(msg.id) as string;
      const gated = await h.engine.flow.gate(msg, async () => expect.unreachable("no hide in this timeline"));
      if (typeof gated !== "boolean") starts.push([at(), name]);
      else {
        const item = await getJob(h.engine.store, msg.id);
        waits.push([at(), `${name} ${item?.parked ? (item.parkedIn ?? first) : "llm"}`]);
      }
    });

    const events = (block?.[1] ?? "").split(", ").map((e) => e.split(" "));
    for (const [time, name, what, tokens] of events) {
      await runUntil(t0 + Number(time) * 1000);
      if (what === "ends") {
        const item = await getJob(h.engine.store, ids.get(name as string) as string);
        await h.engine.flow.leavePlace({ ...(item as NonNullable<typeof item>), status: "done" });
        continue;
      }
      const [tenant, user] = (what as string).split("/");
      const { job } = await h.engine.producer.enqueue({
        kind: "timeline-report",
        payload: { tenant, user, tokens: Number(tokens) },
      });
      ids.set(name as string, job.id);
      names.set(job.id, name as string);
      const item = await getJob(h.engine.store, job.id);
      // Its message went through the transport (taken by takeSends), unless it parked at enqueue.
      if (item?.parked) waits.push([at(), `${name} ${item.parkedIn ?? first}`]);
    }
    // Then until nothing is due any more.
    await runUntil(Number.POSITIVE_INFINITY);
    expect(inOrder(starts)).toBe(block?.[2]);
    expect(inOrder(waits)).toBe(block?.[3]);
  });
});
