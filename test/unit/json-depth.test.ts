import { describe, expect, it } from "vitest";
import { ScheduleInput } from "../../lib/cron/schedule.ts";
import { BoundedJson, MAX_JSON_DEPTH, tooDeepAt } from "../../lib/job/json-depth.ts";
import { EnqueueRequest } from "../../lib/job/schemas.ts";

/** Arrays nested `depth` deep, parsed from text so that building them recurses nowhere. */
const nested = (depth: number): unknown => JSON.parse(`${"[".repeat(depth)}${"]".repeat(depth)}`);

describe("tooDeepAt", () => {
  it("lets a value nested up to the limit through, and names where a deeper one goes past it", () => {
    expect(tooDeepAt(1)).toBeUndefined();
    expect(tooDeepAt(nested(MAX_JSON_DEPTH))).toBeUndefined();
    expect(tooDeepAt(nested(MAX_JSON_DEPTH + 1))).toEqual(Array(MAX_JSON_DEPTH).fill(0));
    expect(tooDeepAt({ a: [1, { b: { c: 1 } }] }, 3)).toEqual(["a", 1, "b"]);
    expect(tooDeepAt({ a: [1, { b: { c: 1 } }] }, 4)).toBeUndefined();
  });

  it("walks 100 000 levels and 100 000 siblings without recursion", () => {
    expect(tooDeepAt(nested(100_000))).toHaveLength(MAX_JSON_DEPTH);
    expect(tooDeepAt(Array.from({ length: 100_000 }, (_, i) => ({ i })))).toBeUndefined();
  });

  it("counts a cycle (a value built in code) as too deep instead of looping", () => {
    const loop: Record<string, unknown> = {};
    loop.self = loop;
    expect(tooDeepAt(loop)).toHaveLength(MAX_JSON_DEPTH);
  });
});

describe("BoundedJson in the schemas that take client JSON", () => {
  it("refuses a 10 000-deep value with one issue at its path, before z.json() recurses", () => {
    const result = BoundedJson.safeParse(nested(10_000));
    expect(result.success).toBe(false);
    expect(result.error?.issues).toHaveLength(1);
    expect(result.error?.issues[0]?.message).toMatch(/more than 64 levels/);
  });

  it("is what the enqueue request checks its payload with", () => {
    const deep = EnqueueRequest.safeParse({ kind: "echo", payload: { list: nested(10_000) } });
    expect(deep.success).toBe(false);
    expect(deep.error?.issues.map((i) => i.path.slice(0, 2))).toEqual([["payload", "list"]]);
    expect(EnqueueRequest.safeParse({ kind: "echo", payload: nested(MAX_JSON_DEPTH) }).success).toBe(true);
  });

  it("is what a schedule checks its payload with", () => {
    const deep = ScheduleInput.safeParse({ cron: "* * * * *", kind: "echo", payload: nested(10_000) });
    expect(deep.success).toBe(false);
    expect(deep.error?.issues[0]?.path[0]).toBe("payload");
  });
});

describe("uniqueKey", () => {
  it("refuses a lone surrogate, which DynamoDB's UTF-8 can't hold, naming the field", () => {
    for (const key of ["a\uD800", "\uDC00b"]) {
      const result = EnqueueRequest.safeParse({ kind: "echo", uniqueKey: key });
      expect(result.error?.issues.map((i) => i.path)).toEqual([["uniqueKey"]]);
    }
  });

  it("takes any whole character, U+FFFE, U+FFFF and emoji included", () => {
    for (const key of ["🚀", "a\uFFFEb", "\uFFFF", "\uD83D\uDE80 pair", "é"]) {
      expect(EnqueueRequest.safeParse({ kind: "echo", uniqueKey: key }).success).toBe(true);
    }
  });
});
