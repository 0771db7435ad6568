import { describe, expect, it } from "vitest";
import { getGroup } from "../../lib/store/group-read-ops.ts";
import { KIND, poolHarnessPerTest } from "../support/pool-harness.ts";
import { waitFor } from "../support/wait.ts";

const pool = poolHarnessPerTest();

describe("job groups on the pool tier", () => {
  it("children served by warm children are recorded like any job; the completion job runs once on the pool too", async () => {
    const h = await pool.create();
    const { group } = await h.engine.groups.create({
      children: [
        ...Array.from({ length: 6 }, (_, i) => ({ kind: KIND, payload: { act: "ok", echo: i } })),
        { kind: KIND, payload: { act: "error" }, maxAttempts: 1 },
      ],
      onComplete: { kind: KIND, payload: { act: "ok", echo: "fold" } },
    });
    const finished = await waitFor(async () => {
      const g = await getGroup(h.engine.store, group.id);
      return g?.status === "failed" ? g : undefined;
    }, "the group to finish");
    expect(finished.counts).toEqual({ done: 6, dead: 1, cancelled: 0 });
    const completion = await h.settled(finished.completionJobId ?? "", "done");
    expect(h.resultOf(completion).echo).toBe("fold");
    expect(completion.completes).toBe(group.id);
    const page = await h.engine.groups.children(group.id, {});
    expect(page.items.map((c) => c.status)).toEqual([...Array(6).fill("done"), "dead"]);
    expect(h.metrics.total("groupChildRecorded")).toBe(7);
  });
});
