import { describe, expect, it } from "vitest";
import { validateDeclarations } from "../../lib/declarations/validate-app.ts";
import { Journal } from "../../lib/durable/journal.ts";
import { openUnder, versionRangeProblem, versionToTake } from "../../lib/durable/versions.ts";
import { NonDeterminismError, VersionChangedError } from "../../lib/durable-errors.ts";
import { kindVersionOf } from "../../lib/job/kind-version.ts";
import type { StepRecord } from "../../lib/store/step-record.ts";
import { defaultQueue } from "../support/test-app.ts";

/** Versions of a durable kind (docs/guide/durable-jobs.md, "Versions"): the pure parts. */
const handler = async () => 1;

describe("kindVersionOf", () => {
  it("is the declared version, else a hash of the handler's source that changes with it", () => {
    expect(kindVersionOf({ version: "2026-06-01", handler })).toBe("2026-06-01");
    const derived = kindVersionOf({ handler });
    expect(derived).toMatch(/^src-[0-9a-f]{12}$/);
    expect(kindVersionOf({ handler: async () => 1 })).toBe(derived);
    expect(kindVersionOf({ handler: async () => 2 })).not.toBe(derived);
  });
});

describe("openUnder", () => {
  const item = { id: "j1", kind: "k", steps: { a: { n: 1, a: 1, t: 0 } }, version: "v1" };
  it("opens as recorded under the same version, without a journal, or a journal from before versions", () => {
    expect(openUnder(item, { version: "v1", handler, onVersionChange: "pause" }).as).toBe("recorded");
    expect(
      openUnder({ ...item, steps: undefined }, { version: "v2", handler, onVersionChange: "pause" }).as,
    ).toBe("recorded");
    expect(
      openUnder({ ...item, version: undefined }, { version: "v2", handler, onVersionChange: "pause" }).as,
    ).toBe("recorded");
  });

  it("applies onVersionChange under another version: continue (the default), restart, pause", () => {
    expect(openUnder(item, { version: "v2", handler }).as).toBe("recorded");
    expect(openUnder(item, { version: "v2", handler, onVersionChange: "continue" }).as).toBe("recorded");
    expect(openUnder(item, { version: "v2", handler, onVersionChange: "restart" })).toEqual({
      version: "v2",
      as: "restart",
    });
    const paused = openUnder(item, { version: "v2", handler, onVersionChange: "pause" });
    expect(paused.as === "refused" && paused.error).toBeInstanceOf(VersionChangedError);
  });
});

describe("ctx.version's choice", () => {
  it("checks its range", () => {
    expect(versionRangeProblem("v", [1, 2])).toBeUndefined();
    expect(versionRangeProblem("v", [2, 2])).toBeUndefined();
    for (const bad of [[2, 1], [1], [1.5, 2], [-1, 1], "1..2", [1, 2, 3]])
      expect(versionRangeProblem("v", bad)).toContain('version "v": the range must be [from, to]');
  });

  it("a recorded version as recorded; else from when the journal goes past, to when not", () => {
    expect(versionToTake({ n: 1, a: 1, t: 0, op: "version", v: "3" }, [1, 4], true)).toEqual({
      value: 3,
      fresh: false,
    });
    expect(versionToTake(undefined, [1, 4], true)).toEqual({ value: 1, fresh: true });
    expect(versionToTake(undefined, [1, 4], false)).toEqual({ value: 4, fresh: true });
  });

  it("in a journal: takes no place, and a recorded version outside the range diverges", () => {
    const steps: Record<string, StepRecord> = {
      a: { n: 1, op: "step", a: 1, t: 0 },
      v: { n: 1, op: "version", a: 1, t: 0, v: "1" },
      nap: { n: 2, op: "sleep", a: 1, t: 0, until: 5 },
    };
    const journal = new Journal("j1", steps, () => {});
    journal.take("a", "step");
    expect(journal.takeVersion("v", [1, 2])).toEqual({ value: 1, fresh: false, at: 1 });
    expect(journal.take("nap", "sleep").at).toBe(2);
    const stale = new Journal("j1", steps, () => {});
    stale.take("a", "step");
    expect(() => stale.takeVersion("v", [2, 3])).toThrow(NonDeterminismError);
    expect(() => stale.takeVersion("v", [2, 3])).toThrow(
      /was recorded at version 1, outside the handler's 2\.\.3/,
    );
  });
});

describe("a kind's version and onVersionChange are checked at start", () => {
  it("names a bad version or onVersionChange", () => {
    const kind = { name: "k", queue: "default", maxAttempts: 1, timeoutSeconds: 10 };
    const problems = validateDeclarations({
      queues: [defaultQueue],
      kinds: [
        { ...kind, name: "k1", version: "has space" },
        { ...kind, name: "k2", version: "x".repeat(65) },
        { ...kind, name: "k3", onVersionChange: "rewind" as never },
        { ...kind, name: "k4", version: "v1", onVersionChange: "restart" },
        { ...kind, name: "k5", onVersionChange: "pause" },
        { ...kind, name: "k6", onVersionChange: "continue" },
      ],
      poolKinds: [],
    });
    expect(problems.filter((p) => /version/i.test(p))).toEqual([
      'kind "k1": version must be 1..64 printable ASCII characters without spaces, got "has space"',
      `kind "k2": version must be 1..64 printable ASCII characters without spaces, got "${"x".repeat(65)}"`,
      'kind "k3": onVersionChange "rewind" is not one of pause, continue, restart',
      'kind "k5": onVersionChange "pause" needs a declared version (the derived one, a hash of the handler as bundled, can change with a build that left the handler alone)',
    ]);
  });
});
