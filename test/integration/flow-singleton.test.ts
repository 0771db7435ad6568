import { describe, expect, it } from "vitest";
import * as z from "zod";
import { RetryAfterError } from "../../lib/errors.ts";
import { defineUnboundKind } from "../../lib/job/kind.ts";
import { OffsetClock } from "../support/clock.ts";
import { harnessPerTest, settled } from "../support/engine-harness.ts";
import { mostAtOnce } from "../support/overlap.ts";
import { deferred } from "../support/wait.ts";

/**
 * A singleton kind under a flow limit (docs/guide/flow-control.md, "Flow control with debounce or
 * singleton"), on the real worker and emulators: one run per doc (queue-one) and one run per tenant
 * at once, whatever the order the enqueues come in; the waiting job of a doc runs with the latest
 * payload; every job ends.
 */
const runs: { doc: string; rev: number; start: number; end: number }[] = [];
let release = deferred();
let started = deferred();
const Edit = z.object({
  tenant: z.string(),
  doc: z.string(),
  rev: z.number(),
  holds: z.boolean().default(false),
  retries: z.boolean().default(false),
});
const edits = defineUnboundKind({
  name: "t-flow-singleton",
  queue: "default",
  payload: Edit,
  maxAttempts: 3,
  timeoutSeconds: 30,
  singleton: { key: (p) => p.doc, mode: "queue-one" },
  flow: { key: (p) => p.tenant, concurrency: 1 },
  handler: async ({ doc, rev, holds, retries }, ctx) => {
    const start = performance.now();
    if (retries && ctx.attempt === 1) {
      started.resolve();
      await release.promise;
      throw new RetryAfterError(1, "the partner asks for a second");
    }
    if (holds) {
      started.resolve();
      await release.promise;
    }
    runs.push({ doc, rev, start, end: performance.now() });
    return rev;
  },
});
const harness = harnessPerTest();

describe("a singleton kind under a flow limit", () => {
  it("one run per doc and one per tenant at once; the doc's waiting job runs its latest payload", async () => {
    release = deferred();
    started = deferred();
    const h = await harness.create({ clock: new OffsetClock(), extraKinds: [edits] });
    h.startPoller();
    const enqueue = (doc: string, rev: number, holds = false) =>
      h.engine.producer.enqueue({ kind: "t-flow-singleton", payload: { tenant: "acme", doc, rev, holds } });
    const first = await enqueue("x", 1, true);
    await started.promise;
    // x's later revisions wait for x's run (queue-one keeps one waiting job, the latest payload);
    // y waits for acme's one place.
    const second = await enqueue("x", 2);
    const joined = await enqueue("x", 3);
    const other = await enqueue("y", 1);
    expect(joined.job.id).toBe(second.job.id);
    release.resolve();
    for (const id of [first.job.id, second.job.id, other.job.id]) await settled(h, id, "done");
    expect(runs.map((r) => `${r.doc}${r.rev}`).sort()).toEqual(["x1", "x3", "y1"]);
    expect(mostAtOnce(runs.map((r) => [r.start, r.end] as const))).toBe(1);
    expect(runs[0]).toMatchObject({ doc: "x", rev: 1 });
  });

  it("a job handed a place while its doc's earlier job retries gives the place back to wait: no deadlock", async () => {
    release = deferred();
    started = deferred();
    const h = await harness.create({ clock: new OffsetClock(), extraKinds: [edits] });
    h.startPoller();
    const enqueue = (payload: { doc: string; rev: number; holds?: boolean; retries?: boolean }) =>
      h.engine.producer.enqueue({ kind: "t-flow-singleton", payload: { tenant: "acme", ...payload } });
    // x1 holds acme's one place, then fails its first attempt and retries a second later.
    const first = await enqueue({ doc: "x", rev: 1, holds: true, retries: true });
    // x2 (after x1) finds acme full at its enqueue and waits in its line: when x1's run ends, acme's
    // place is handed to x2, whose doc's earlier job (x1) has not ended. Holding that place while it
    // waits for x1 would keep x1's retry out of acme for good.
    await started.promise;
    const second = await enqueue({ doc: "x", rev: 2 });
    expect(second.job.id).not.toBe(first.job.id);
    release.resolve();
    await settled(h, first.job.id, "done");
    await settled(h, second.job.id, "done");
    expect(mostAtOnce(runs.map((r) => [r.start, r.end] as const))).toBe(1);
  });
});
