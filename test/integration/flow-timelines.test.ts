import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import type { DebounceMode } from "../../lib/job/coalesce.ts";
import { collectKindDefinition } from "../../lib/job/collect.ts";
import { rateCells, rateSlot } from "../../lib/job/flow.ts";
import { flowKey, flowRateBucket } from "../../lib/job/flow-key.ts";
import { defineUnboundKind } from "../../lib/job/kind.ts";
import { reserveStart } from "../../lib/store/rate-limit-ops.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import { ManualClock } from "../support/clock.ts";
import { harnessPerTest } from "../support/engine-harness.ts";

/**
 * docs/guide/flow-control.md's debounce timelines, played through the real enqueue path on the emulators
 * with a manual clock (period 2 s, maximum delay 5 s): each enqueue at its time, then each job made
 * as "when it runs [what it runs with]". The docs' blocks are read, so they can't drift.
 */
const Rev = z.object({ doc: z.string(), rev: z.number().int() });
const debounce = { key: (p: { doc: string }) => p.doc, periodSeconds: 2, maxDelaySeconds: 5 };
const single = (mode: "trailing" | "leading") =>
  defineUnboundKind({
    name: `timeline-${mode}`,
    queue: "default",
    payload: Rev,
    maxAttempts: 1,
    timeoutSeconds: 30,
    debounce: { ...debounce, mode },
    handler: async () => null,
  });
const kinds = [
  single("trailing"),
  single("leading"),
  collectKindDefinition({
    name: "timeline-collect",
    queue: "default",
    payload: Rev,
    maxAttempts: 1,
    timeoutSeconds: 30,
    debounce,
    handler: async (revs) => revs.map(() => null),
  }),
];

const docs = readFileSync(new URL("../../docs/guide/flow-control.md", import.meta.url), "utf8");
const timelines = [...docs.matchAll(/```text timeline (\w+)\nenqueues: (.*)\nruns: (.*)\n```/g)].map(
  ([, mode, enqueues, runs]) => ({
    mode: mode as DebounceMode,
    enqueues: (enqueues ?? "").split(", ").map((e) => {
      const [at, name] = e.split(" ");
      return { at: Number(at) * 1000, rev: Number(name?.slice(1)) };
    }),
    runs: runs ?? "",
  }),
);

const harness = harnessPerTest();
const rev = (json: string) => `r${(JSON.parse(json) as { rev: number }).rev}`;

describe("docs/guide/flow-control.md's rate timeline", () => {
  const block = docs.match(/```text timeline rate\nenqueues: (.*)\nstarts: (.*)\n```/);
  it("is played by the key's real reservation: each start at its turn", async () => {
    expect(block).not.toBeNull();
    const clock = new ManualClock();
    const t0 = clock.now();
    const h = await harness.create({ clock, extraKinds: kinds });
    const rate = { limit: 5, periodSeconds: 1, burst: 2 };
    const starts: string[] = [];
    for (const arrival of (block?.[1] ?? "").split(", ")) {
      const [at, name] = arrival.split(" ");
      clock.advance(t0 + Number(at) * 1000 - clock.now());
      const now = clock.now();
      const { before } = await reserveStart(
        h.engine.store,
        flowRateBucket(flowKey("timeline", "k")),
        now,
        rateCells(rate).intervalMs,
      );
      starts.push(`${((rateSlot(before, now, rate) - t0) / 1000).toFixed(1)} ${name}`);
    }
    expect(starts.join(", ")).toBe(block?.[2]);
  });
});

describe("docs/guide/flow-control.md's debounce timelines", () => {
  it("has one per debounce mode", () => {
    expect(timelines.map((t) => t.mode).sort()).toEqual(["collect", "leading", "trailing"]);
  });

  it.each(timelines)("$mode", async ({ mode, enqueues, runs }) => {
    const clock = new ManualClock();
    const t0 = clock.now();
    const h = await harness.create({ clock, extraKinds: kinds });
    const ids: string[] = [];
    for (const { at, rev: n } of enqueues) {
      clock.advance(t0 + at - clock.now());
      const { job } = await h.engine.producer.enqueue({
        kind: `timeline-${mode}`,
        payload: { doc: "d", rev: n },
      });
      if (!ids.includes(job.id)) ids.push(job.id);
    }
    const played = [];
    for (const id of ids) {
      const item = await getJob(h.engine.store, id);
      const payloads = item?.burst ?? (item?.payload ? [item.payload] : []);
      const seconds = (((item?.runAt ?? Number.NaN) - t0) / 1000).toFixed(1);
      played.push(`${seconds} [${payloads.map(rev).join(" ")}]`);
    }
    expect(played.join(", ")).toBe(runs);
  });
});
