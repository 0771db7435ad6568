import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { jobStatuses } from "../../lib/job/status.ts";
import { docBlocks } from "../support/doc-blocks.ts";
import { projectRoot } from "../support/project-copy.ts";

/**
 * The pictures of the state machine can't be run, but they can't drift from it either: each one
 * names every status of lib/job/status.ts, and the README counts them as the code does.
 */
const pictures = ["docs/architecture.md", "docs/guide/lifecycle.md"];
const counted = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"];

describe("the lifecycle pictures", () => {
  for (const path of pictures) {
    it(`${path}'s picture names every status`, () => {
      const picture = docBlocks(path).find((b) => b.marker?.includes("a picture of the state machine"));
      expect(picture, `${path} has a block marked as the state machine's picture`).toBeDefined();
      const words = new Set(picture?.text.match(/[a-z]+/g));
      expect(jobStatuses.filter((s) => !words.has(s))).toEqual([]);
    });
  }

  it("the README counts the statuses as lib/job/status.ts does", () => {
    const readme = readFileSync(join(projectRoot, "README.md"), "utf8");
    const count = /\| (\w+) statuses,/.exec(readme)?.[1]?.toLowerCase();
    expect(count).toBe(counted[jobStatuses.length]);
  });
});
