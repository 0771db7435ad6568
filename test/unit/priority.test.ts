import { describe, expect, it } from "vitest";
import { flowKey } from "../../lib/job/flow-key.ts";
import {
  agedArrival,
  isCritical,
  PRIORITY_STEP_MS,
  type Priority,
  priorityLevel,
} from "../../lib/job/priority.ts";
import { parkIndexKeys } from "../../lib/store/keys.ts";

/** Priorities that age (docs/guide/flow-control.md "Priorities"): the level, the aged arrival, the line's sort keys. */

const T = 1_767_323_045_000;
const fk = flowKey("tenant-echo", "acme");
const id = (n: number) => `01JPRIORITY${String(n).padStart(15, "0")}`;

describe("a priority's level", () => {
  it("is the number given; normal is 3, critical 5, none (an item before priorities) 3", () => {
    expect([1, 2, 3, 4, 5].map((p) => priorityLevel(p))).toEqual([1, 2, 3, 4, 5]);
    expect(priorityLevel("normal")).toBe(3);
    expect(priorityLevel("critical")).toBe(5);
    expect(priorityLevel(undefined)).toBe(3);
  });

  it("only the name critical grows the pool, not a plain 5", () => {
    expect(isCritical("critical")).toBe(true);
    for (const p of [5, 1, "normal", undefined] as const) expect(isCritical(p)).toBe(false);
  });
});

describe("the aged arrival a parked job is sorted by", () => {
  it("moves a job (level - 3) steps before its enqueue", () => {
    expect(agedArrival(T, 3)).toBe(T);
    expect(agedArrival(T, 5)).toBe(T - 2 * PRIORITY_STEP_MS);
    expect(agedArrival(T, 1)).toBe(T + 2 * PRIORITY_STEP_MS);
    expect(agedArrival(T, "critical")).toBe(agedArrival(T, 5));
    expect(agedArrival(T, "normal")).toBe(agedArrival(T, 3));
    expect(agedArrival(1_000, 5)).toBe(0);
  });

  it("in a key's line, text order is aged order: the higher priority first unless enqueued a step per level later", () => {
    const jobs: { n: number; at: number; priority: Priority }[] = [
      { n: 1, at: T, priority: 1 },
      { n: 2, at: T, priority: 3 },
      { n: 3, at: T + 1, priority: 5 },
      // Enqueued just after the priority-1 job's bound (4 steps): behind it.
      { n: 4, at: T + 4 * PRIORITY_STEP_MS + 1, priority: 5 },
      // Just within it: ahead of it.
      { n: 5, at: T + 4 * PRIORITY_STEP_MS - 1, priority: 5 },
      { n: 6, at: T - 10 * PRIORITY_STEP_MS, priority: 1 },
      // A later job whose aged time is an earlier digit count: still fixed-width, still in order.
      { n: 7, at: 99_999, priority: 5 },
    ];
    const sorted = jobs
      .map((j) => ({
        n: j.n,
        sk: parkIndexKeys(fk, { createdAt: j.at, id: id(j.n), priority: j.priority }).gsi1sk,
      }))
      .sort((a, b) => (a.sk < b.sk ? -1 : a.sk > b.sk ? 1 : 0))
      .map((j) => j.n);
    expect(sorted).toEqual([7, 6, 3, 2, 5, 1, 4]);
  });

  it("two jobs of one aged time keep their ids' order", () => {
    const a = parkIndexKeys(fk, { createdAt: T, id: id(1), priority: 3 }).gsi1sk;
    const b = parkIndexKeys(fk, { createdAt: T - PRIORITY_STEP_MS, id: id(2), priority: 2 }).gsi1sk;
    expect(a < b).toBe(true);
    expect(a.length).toBe(b.length);
  });
});
