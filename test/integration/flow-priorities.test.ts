import { readFileSync } from "node:fs";
import { ScanCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { handleEnqueueInvoke } from "../../lib/api/invoke.ts";
import { ClientError } from "../../lib/errors.ts";
import { defineUnboundKind } from "../../lib/job/kind.ts";
import { PRIORITY_STEP_MS } from "../../lib/job/priority.ts";
import { claim } from "../../lib/store/lease-ops.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import { seedFromMessage } from "../../lib/transport/job-message.ts";
import { ManualClock } from "../support/clock.ts";
import { type Harness, harnessPerTest } from "../support/engine-harness.ts";
import { gateTimeline, inOrder } from "../support/gate-timeline.ts";

/**
 * Priorities that age (docs/guide/flow-control.md, "Priorities"), through the real enqueue, the real
 * flow gate and the real hand-over of places on the emulators, on a manual clock: one key runs one
 * job at a time; the jobs that find it full wait in its line, ordered by their enqueue time aged by
 * their priority. A run's end hands its place to the line's first job, whose message the gate then
 * passes and the real claim takes (out of the line): that is when it starts.
 */
const Job = z.object({ tenant: z.string() });
const kind = defineUnboundKind({
  name: "prio-echo",
  queue: "default",
  payload: Job,
  maxAttempts: 1,
  timeoutSeconds: 30,
  flow: { name: "tenant", key: (p) => p.tenant, concurrency: 1 },
  handler: async () => null,
});

const docs = readFileSync(new URL("../../docs/guide/flow-control.md", import.meta.url), "utf8");
const block = docs.match(/```text timeline priorities\nevents: (.*)\nstarts: (.*)\n```/);
const harness = harnessPerTest();

/** A key's line played on a manual clock: enqueue with a priority, end a run, read who started when. */
async function lineOf(h: Harness, clock: ManualClock) {
  const t0 = clock.now();
  const ids = new Map<string, string>();
  const names = new Map<string, string>();
  const starts: [number, string][] = [];
  const at = () => (clock.now() - t0) / 1000;
  const { runUntil } = gateTimeline(h, clock, async (msg) => {
    const gated = await h.engine.flow.gate(msg, async () => expect.unreachable("no hide in this line"));
    if (typeof gated === "boolean") return;
    // Its claim, as the worker's next step: the job leaves the line for good.
    const claimed = await claim(h.engine.store, seedFromMessage(msg), `lease-${msg.id}`, 30_000);
    expect(claimed.claimed).toBe(true);
    starts.push([at(), names.get(msg.id) as string]);
  });
  return {
    starts,
    runUntil: (seconds: number) => runUntil(Number.isFinite(seconds) ? t0 + seconds * 1000 : seconds),
    enqueue: async (name: string, priority: number | "normal" | "critical") => {
      const { job } = await h.engine.producer.enqueue({
        kind: kind.name,
        payload: { tenant: "acme" },
        priority,
      });
      ids.set(name, job.id);
      names.set(job.id, name);
    },
    end: async (name: string) => {
      const item = await getJob(h.engine.store, ids.get(name) as string);
      await h.engine.flow.leavePlace({ ...(item as NonNullable<typeof item>), status: "done" });
    },
  };
}

describe("a priority outside 1..5", () => {
  it("is refused naming the field, over HTTP's producer and over Invoke, and nothing is written", async () => {
    const h = await harness.create({ clock: new ManualClock(), extraKinds: [kind] });
    const scan = () => h.engine.store.doc.send(new ScanCommand({ TableName: h.engine.store.table }));
    const before = (await scan()).Items?.length;
    for (const priority of [0, 6, 2.5, "3", "urgent", null]) {
      const request = { kind: kind.name, payload: { tenant: "acme" }, priority };
      const refused = await h.engine.producer.enqueue(request).then(
        () => expect.unreachable(`priority ${JSON.stringify(priority)} was taken`),
        (err: unknown) => err,
      );
      expect(refused).toBeInstanceOf(ClientError);
      expect((refused as ClientError).issues?.map((i) => i.path)).toEqual(["priority"]);
      const answer = await handleEnqueueInvoke(h.engine, request);
      expect(answer).toMatchObject({ error: { code: "validation_error", issues: [{ path: "priority" }] } });
    }
    expect((await scan()).Items?.length).toBe(before);
    expect(await h.receive(10, 0)).toMatchObject({ Records: [] });
  });
});

describe("priorities in a flow key's line", () => {
  it("under a backlog, every priority-5 job starts before every priority-1 job of the key and queue", async () => {
    const clock = new ManualClock();
    const h = await harness.create({ clock, extraKinds: [kind] });
    const line = await lineOf(h, clock);
    await line.enqueue("first", 3);
    await line.runUntil(0);
    // Twelve jobs within 12 s, lows and highs alternating, the lows first: a backlog behind `first`.
    for (let i = 0; i < 6; i++) {
      await line.runUntil(2 * i + 1);
      await line.enqueue(`low${i}`, 1);
      await line.runUntil(2 * i + 2);
      await line.enqueue(`high${i}`, 5);
    }
    // Each run ends 10 s after it started: the line drains one job at a time.
    let last = "first";
    for (let t = 20; line.starts.length < 13; t += 10) {
      await line.end(last);
      await line.runUntil(t);
      last = line.starts.at(-1)?.[1] as string;
    }
    const order = line.starts.map(([, name]) => name);
    expect(order).toEqual([
      "first",
      ...[0, 1, 2, 3, 4, 5].map((i) => `high${i}`),
      ...[0, 1, 2, 3, 4, 5].map((i) => `low${i}`),
    ]);
  });

  it("plays the guide's timeline: a priority-1 job starts before a priority-5 job enqueued more than 4 steps after it", async () => {
    expect(block).not.toBeNull();
    // The guide's times are for a 30 s step.
    expect(PRIORITY_STEP_MS).toBe(30_000);
    const clock = new ManualClock();
    const h = await harness.create({ clock, extraKinds: [kind] });
    const line = await lineOf(h, clock);
    const events = (block?.[1] ?? "").split(", ").map((e) => e.split(" "));
    for (const [time, name, what] of events) {
      await line.runUntil(Number(time));
      if (what === "ends") await line.end(name as string);
      else
        await line.enqueue(name as string, /^\d$/.test(what as string) ? Number(what) : (what as "normal"));
    }
    await line.runUntil(Number.POSITIVE_INFINITY);
    expect(inOrder(line.starts)).toBe(block?.[2]);
  });
});
