import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { apiRouteMatcher } from "../../lib/api/route-keys.ts";
import { EventRequest } from "../../lib/durable/deliver-event.ts";
import { codeBlocks, httpRequestOf } from "../support/doc-blocks.ts";

/**
 * docs/guide/durable-jobs.md can't drift: its TypeScript block is the demo kind's file (type-checked and
 * run by the suite), and each HTTP block names a route the API serves, with a body the route takes.
 * The event block is also sent to a waiting job by test/integration/durable.test.ts.
 */
const DOC = "docs/guide/durable-jobs.md";

describe("docs/guide/durable-jobs.md", () => {
  it("its TypeScript blocks are app/kinds/onboard.ts, and the body of a kind a test runs", () => {
    const file = readFileSync(new URL("../../app/kinds/onboard.ts", import.meta.url), "utf8");
    const [onboard, versions, ...more] = codeBlocks(DOC, "ts");
    expect(onboard).toEqual(file);
    expect(more).toEqual([]);
    // Versions: the handler of t-doc-version, line for line once its indentation is taken off.
    const test = readFileSync(new URL("../integration/durable-versions.test.ts", import.meta.url), "utf8");
    const lines = test.split("\n").map((line) => line.replace(/^ {4}/, ""));
    const block = (versions ?? "").trimEnd().split("\n");
    const start = lines.indexOf(block[0] ?? "");
    expect(start, "the block's first line in the test").toBeGreaterThan(0);
    expect(lines.slice(start, start + block.length)).toEqual(block);
  });

  it("each HTTP block is a route of the API with a JSON body", () => {
    const blocks = codeBlocks(DOC, "http");
    expect(blocks).toHaveLength(2);
    for (const block of blocks) {
      const { method, path, body } = httpRequestOf(block);
      expect(apiRouteMatcher.find(method, path), block).toBeDefined();
      if (path === "/events") expect(EventRequest.safeParse(body).success).toBe(true);
      else expect(Object.keys(body as object)).toEqual(["data"]);
    }
  });
});
