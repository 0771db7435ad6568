import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { apiRouteMatcher } from "../../lib/api/route-keys.ts";
import { EventRequest } from "../../lib/durable/deliver-event.ts";
import { codeBlocks, docBlocks, httpRequestOf } from "../support/doc-blocks.ts";

/**
 * docs/guide/durable-jobs.md can't drift: its first TypeScript block is the demo kind's file (type-checked
 * and run by the suite), a child job's block lines of test/unit/invoke-types.test.ts (type-checked), the others compile as files of the project, and each HTTP block names a route the API serves, with a body the route takes.
 * The event block is also sent to a waiting job by test/integration/durable.test.ts.
 */
const DOC = "docs/guide/durable-jobs.md";

describe("docs/guide/durable-jobs.md", () => {
  it("its TypeScript blocks: app/kinds/onboard.ts, a kind's body a test runs, compiled snippets, type-checked lines", () => {
    const file = readFileSync(new URL("../../app/kinds/onboard.ts", import.meta.url), "utf8");
    const blocks = docBlocks(DOC).filter((b) => b.lang === "ts");
    const marked = blocks.filter((b) => b.marker?.includes("it is app/kinds/onboard.ts"));
    expect(marked.map((b) => b.text)).toEqual([file]);
    const invoke = readFileSync(new URL("./invoke-types.test.ts", import.meta.url), "utf8");
    const versionsTest = readFileSync(
      new URL("../integration/durable-versions.test.ts", import.meta.url),
      "utf8",
    );
    const testLines = versionsTest.split("\n").map((line) => line.replace(/^ {4}/, ""));
    // Versions: the handler of t-doc-version, line for line once its indentation is taken off; a
    // child job's block is lines of test/unit/invoke-types.test.ts (type-checked there); every other
    // TypeScript block is compiled as a file of the project (test/unit/guide-snippets.test.ts).
    for (const block of blocks.filter((b) => !marked.includes(b))) {
      if (block.marker?.includes("t-doc-version")) {
        const lines = block.text.trimEnd().split("\n");
        const start = testLines.indexOf(lines[0] ?? "");
        expect(start, "the block's first line in the test").toBeGreaterThan(0);
        expect(testLines.slice(start, start + lines.length)).toEqual(lines);
      } else if (block.marker?.includes("invoke-types.test.ts"))
        expect(invoke.includes(block.text), block.text).toBe(true);
      else expect(block.marker, block.text).toMatch(/^checked by test\/unit\/guide-snippets\.test\.ts/);
    }
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
