import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, typeScriptFiles } from "../support/source-files.ts";

/**
 * The house's size rule, kept by CI: every lib/ file stays at most 300 lines, so each one holds one
 * concept a reader can take in at once. A file that grows past it is split by concept, not trimmed.
 */
const MAX_LINES = 300;

/** Lines as an editor numbers them: a final newline does not start another line. */
const lineCount = (text: string) => text.split("\n").length - (text.endsWith("\n") ? 1 : 0);

describe("file sizes", () => {
  it(`every lib/ file has at most ${MAX_LINES} lines`, () => {
    const files = typeScriptFiles(join(ROOT, "lib"));
    expect(files.length).toBeGreaterThan(0);
    const over = files
      .map((path) => ({ file: relative(ROOT, path), lines: lineCount(readFileSync(path, "utf8")) }))
      .filter((f) => f.lines > MAX_LINES)
      .map((f) => `${f.file} (${f.lines} lines)`)
      .sort();
    expect(over, `split these by concept: ${over.join(", ")}`).toEqual([]);
  });
});
