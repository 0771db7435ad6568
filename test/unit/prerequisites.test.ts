import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import {
  DEFAULT_CHROMIUM,
  javaMajor,
  type Machine,
  missingPrerequisites,
  thisMachine,
} from "../support/prerequisites.ts";

/** `npm test`'s prerequisites: one line per missing thing, naming what needs it and how to get it. */

const complete: Machine = {
  javaVersion: () => 'openjdk version "17.0.15" 2025-04-15',
  chromiumPath: DEFAULT_CHROMIUM,
  isExecutable: () => true,
  runs: () => true,
  uid: 0,
};

describe("npm test's prerequisites", () => {
  it("this machine has every one (the suite runs here)", () => {
    expect(missingPrerequisites(thisMachine(process.env))).toEqual([]);
  });

  it("reads Java's major version in both of its spellings", () => {
    expect(javaMajor('openjdk version "21" 2023-09-19')).toBe(21);
    expect(javaMajor('openjdk version "17.0.15" 2025-04-15')).toBe(17);
    expect(javaMajor('java version "1.8.0_292"')).toBe(8);
    expect(javaMajor("bash: java: command not found")).toBeUndefined();
  });

  it("each missing thing is one line with its install", () => {
    expect(missingPrerequisites(complete)).toEqual([]);
    const none = missingPrerequisites({
      javaVersion: () => undefined,
      chromiumPath: "/opt/chrome/chrome",
      isExecutable: () => false,
      runs: () => false,
      uid: 1000,
    });
    expect(none).toHaveLength(6);
    expect(none[0]).toBe(
      "Java 17+ for DynamoDB Local (the store suite): no java on PATH; install: apt-get install openjdk-17-jre-headless",
    );
    expect(none[1]).toMatch(
      /^chromium for the console's browser test: none at \/opt\/chrome\/chrome; .*CHROMIUM_PATH/,
    );
    expect(none[2]).toMatch(/^python3 on PATH .*apt-get install python3$/);
    expect(none[3]).toMatch(/^setpriv .*apt-get install util-linux$/);
    expect(none[4]).toMatch(/^flock .*apt-get install util-linux$/);
    expect(none[5]).toMatch(/^root: .*running as uid 1000;/);
    expect(missingPrerequisites({ ...complete, javaVersion: () => 'java version "1.8.0_292"' })).toEqual([
      expect.stringMatching(/^Java 17\+ .*: found Java 8; install/),
    ]);
    expect(missingPrerequisites({ ...complete, runs: (p) => p !== "setpriv" })).toEqual([
      expect.stringMatching(/^setpriv/),
    ]);
    expect(missingPrerequisites({ ...complete, runs: (p) => p !== "flock" })).toEqual([
      expect.stringMatching(/^flock/),
    ]);
  });

  it("a run on a machine without them fails before any file, one line each", () => {
    // A chromium that isn't there: vitest's own run of a unit file stops at the check.
    const root = fileURLToPath(new URL("../..", import.meta.url));
    const run = spawnSync(
      `${root}node_modules/.bin/vitest`,
      ["run", "--project", "unit", "test/unit/backoff.test.ts"],
      { cwd: root, env: { ...process.env, CHROMIUM_PATH: "/nonexistent/chromium" }, encoding: "utf8" },
    );
    const out = `${run.stdout}${run.stderr}`;
    expect(run.status, out).not.toBe(0);
    expect(out).toContain('npm test needs one thing this machine lacks (README, "Two commands"):');
    expect(out).toContain("  - chromium for the console's browser test: none at /nonexistent/chromium;");
  }, 60_000);
});
