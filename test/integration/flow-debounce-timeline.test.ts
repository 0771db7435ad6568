import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { defineUnboundKind } from "../../lib/job/kind.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import { ManualClock } from "../support/clock.ts";
import { harnessPerTest } from "../support/engine-harness.ts";
import { gateTimeline, inOrder } from "../support/gate-timeline.ts";

/**
 * docs/guide/flow-control.md's timeline of a debounced kind under a flow limit, played through the
 * real enqueue (its debounce joins and bursts), the real gate and the real hand-over of places on the
 * emulators, on a manual clock: a trailing debounce of 2 s per doc, one run at a time per tenant.
 * At each time its events happen (an enqueue, a run's end), then every delivery due by then meets
 * the gate as a worker's would: a job that passes and is due starts; one that passes before its
 * burst's run (the burst moved on) gives its place back and comes back when due, as a lost claim
 * does; one refused waits in its tenant's line. The block is read, so it can't drift.
 */
const Doc = z.object({ tenant: z.string(), doc: z.string() });
const indexed = defineUnboundKind({
  name: "timeline-debounced",
  queue: "default",
  payload: Doc,
  maxAttempts: 1,
  timeoutSeconds: 30,
  debounce: { key: (p) => p.doc, periodSeconds: 2, maxDelaySeconds: 10, mode: "trailing" },
  flow: { name: "tenant", key: (p) => p.tenant, concurrency: 1 },
  handler: async () => null,
});

const docs = readFileSync(new URL("../../docs/guide/flow-control.md", import.meta.url), "utf8");
const block = docs.match(/```text timeline flow-debounce\nevents: (.*)\nstarts: (.*)\nwaits: (.*)\n```/);
const harness = harnessPerTest();

describe("docs/guide/flow-control.md's timeline of a debounced kind under a flow limit", () => {
  it("is played by the real enqueue and gate: a burst makes one job, and that job takes the place", async () => {
    expect(block).not.toBeNull();
    const clock = new ManualClock();
    const t0 = clock.now();
    const h = await harness.create({ clock, extraKinds: [indexed] });
    const ids = new Map<string, string>();
    const names = new Map<string, string>();
    const starts: [number, string][] = [];
    const waits: [number, string][] = [];
    const at = () => (clock.now() - t0) / 1000;
    const { runUntil, later } = gateTimeline(h, clock, async (msg) => {
      const name = names.get(msg.id) as string;
      const gated = await h.engine.flow.gate(msg, async () => expect.unreachable("no hide here"));
      if (typeof gated === "boolean") {
        waits.push([at(), `${name} ${(await getJob(h.engine.store, msg.id))?.parked ? "tenant" : "?"}`]);
        return;
      }
      const runAt = (await getJob(h.engine.store, msg.id))?.runAt ?? 0;
      if (runAt <= clock.now()) {
        starts.push([at(), name]);
        return;
      }
      // Its burst moved on: the claim would find it not due, give the place back, and hide it.
      await h.engine.flow.releasePlace(gated, msg.id);
      later(runAt, msg);
    });

    const events = (block?.[1] ?? "").split(", ").map((e) => e.split(" "));
    for (const [time, name, what] of events) {
      await runUntil(t0 + Number(time) * 1000);
      if (what === "ends") {
        const item = await getJob(h.engine.store, ids.get(name as string) as string);
        await h.engine.flow.leavePlace({ ...(item as NonNullable<typeof item>), status: "done" });
        continue;
      }
      const [tenant, doc] = (what as string).split("/");
      const { job } = await h.engine.producer.enqueue({
        kind: "timeline-debounced",
        payload: { tenant, doc },
      });
      // A name seen before is an enqueue the timeline says joins that job's burst; a new one, a new job.
      expect(job.id === ids.get(name as string), `${time} ${name}`).toBe(ids.has(name as string));
      ids.set(name as string, job.id);
      names.set(job.id, name as string);
    }
    await runUntil(Number.POSITIVE_INFINITY);
    expect(inOrder(starts)).toBe(block?.[2]);
    expect(inOrder(waits)).toBe(block?.[3]);
  });
});
