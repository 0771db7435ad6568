import { describe, expect, it } from "vitest";
import { PRIORITY_STEP_MS } from "../../lib/job/priority.ts";
import type { JobItem } from "../../lib/store/job-item.ts";
import { analysePriorities } from "../../scripts/bench-priorities.ts";

/** The priorities scenario's analysis (scripts/bench-priorities.ts): waits by priority, and the bound's check. */

const T = 1_767_323_045_000;
const item = (id: string, priority: JobItem["priority"], createdAt: number, startedAt: number) =>
  ({ id, priority, createdAt, startedAt }) as JobItem;

describe("analysePriorities", () => {
  it("gives each priority's waits, highest first", () => {
    const { byPriority } = analysePriorities([
      item("a", 5, T, T + 1_000),
      item("b", 1, T, T + 9_000),
      item("c", "normal", T, T + 4_000),
      item("d", 5, T, T + 3_000),
    ]);
    expect(byPriority.map((p) => [p.priority, p.jobs, p.p50Ms, p.maxMs])).toEqual([
      [5, 2, 1_000, 3_000],
      [3, 1, 4_000, 4_000],
      [1, 1, 9_000, 9_000],
    ]);
  });

  it("counts a higher job that started first though enqueued past the lower one's bound, and only that", () => {
    const low = item("low", 1, T, T + 200_000);
    const within = item("within", 5, T + 4 * PRIORITY_STEP_MS, T + 150_000);
    const beyond = item("beyond", 5, T + 4 * PRIORITY_STEP_MS + 1, T + 150_000);
    const later = item("later", 5, T + 4 * PRIORITY_STEP_MS + 1, T + 250_000);
    expect(analysePriorities([low, within, later]).beyondBound).toBe(0);
    expect(analysePriorities([low, within, beyond, later]).beyondBound).toBe(1);
  });
});
