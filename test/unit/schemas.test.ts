import { describe, expect, test } from "vitest";
import { EnqueueBatchRequest, EnqueueRequest, MAX_BATCH } from "../../lib/job/schemas.ts";

const issues = (raw: unknown) => {
  const r = EnqueueRequest.safeParse(raw);
  return r.success ? [] : r.error.issues;
};

describe("EnqueueRequest", () => {
  test("accepts a minimal and a full request", () => {
    expect(EnqueueRequest.safeParse({ kind: "echo" }).success).toBe(true);
    const full = {
      kind: "echo",
      payload: { a: [1, "b", null, { c: true }] },
      queue: "default",
      runAt: "2026-01-01T00:10:00+02:00",
      uniqueKey: "k",
      maxAttempts: 7,
      priority: "critical",
      timeoutSeconds: 60,
    };
    expect(EnqueueRequest.parse(full)).toEqual(full);
  });

  test("delaySeconds and runAt together are rejected, pointing at runAt", () => {
    const found = issues({ kind: "echo", delaySeconds: 5, runAt: "2026-01-01T00:00:00Z" });
    expect(found).toHaveLength(1);
    expect(found[0]?.path).toEqual(["runAt"]);
    expect(found[0]?.message).toMatch(/not both/);
    expect(EnqueueRequest.safeParse({ kind: "echo", delaySeconds: 5 }).success).toBe(true);
    expect(EnqueueRequest.safeParse({ kind: "echo", runAt: "2026-01-01T00:00:00Z" }).success).toBe(true);
  });

  test("maxAttempts is an integer in 1..100", () => {
    for (const ok of [1, 50, 100])
      expect(EnqueueRequest.safeParse({ kind: "echo", maxAttempts: ok }).success).toBe(true);
    for (const bad of [0, -1, 101, 2.5, "3"]) {
      const found = issues({ kind: "echo", maxAttempts: bad });
      expect(found.map((i) => i.path.join("."))).toEqual(["maxAttempts"]);
    }
  });

  test("unknown fields are rejected", () => {
    const found = issues({ kind: "echo", delay: 5 });
    expect(found).toHaveLength(1);
    expect(found[0]?.code).toBe("unrecognized_keys");
    expect(found[0]).toMatchObject({ keys: ["delay"] });
  });

  test("kind is required and non-empty; other fields are typed", () => {
    expect(issues({}).map((i) => i.path.join("."))).toEqual(["kind"]);
    expect(issues({ kind: "" }).map((i) => i.path.join("."))).toEqual(["kind"]);
    expect(issues({ kind: "echo", delaySeconds: -1 }).map((i) => i.path.join("."))).toEqual(["delaySeconds"]);
    expect(issues({ kind: "echo", runAt: "tomorrow" }).map((i) => i.path.join("."))).toEqual(["runAt"]);
    expect(issues({ kind: "echo", priority: "high" }).map((i) => i.path.join("."))).toEqual(["priority"]);
    expect(issues({ kind: "echo", queue: "Bad Queue" }).map((i) => i.path.join("."))).toEqual(["queue"]);
  });
});

describe("EnqueueRequest priority", () => {
  test("takes 1..5 and the names normal and critical", () => {
    for (const priority of [1, 2, 3, 4, 5, "normal", "critical"])
      expect(EnqueueRequest.safeParse({ kind: "echo", priority }).success, String(priority)).toBe(true);
  });

  test("refuses a number outside 1..5, a fraction, a numeric string or another name, naming the field", () => {
    for (const priority of [0, 6, -1, 2.5, Number.NaN, "3", "high", "", null, true, [3], { level: 3 }]) {
      const found = issues({ kind: "echo", priority });
      expect(
        found.map((i) => i.path.join(".")),
        JSON.stringify(priority),
      ).toEqual(["priority"]);
      expect(found[0]?.message).toBe('priority is an integer 1..5 (or "normal", "critical")');
    }
  });
});

describe("EnqueueBatchRequest", () => {
  test("takes 1..MAX_BATCH items of anything (each is checked on its own later)", () => {
    expect(EnqueueBatchRequest.safeParse({ jobs: [{ nonsense: true }] }).success).toBe(true);
    expect(EnqueueBatchRequest.safeParse({ jobs: [] }).success).toBe(false);
    expect(EnqueueBatchRequest.safeParse({ jobs: new Array(MAX_BATCH + 1).fill({}) }).success).toBe(false);
    expect(EnqueueBatchRequest.safeParse({ jobs: [{}], extra: 1 }).success).toBe(false);
  });
});
