import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, typeScriptFiles } from "../support/source-files.ts";

/**
 * One error hierarchy (lib/errors.ts): what lib/ throws says which kind of failure it is (ConfigError,
 * UsageError, TransientError, InvariantError, a store or client error), so callers and logs can tell
 * a bad declaration from a bug or a passing outage. A plain `throw new Error(` says none of that.
 */

describe("error classes", () => {
  it("lib/ throws no plain Error", () => {
    const files = typeScriptFiles(join(ROOT, "lib"));
    const plain = files.flatMap((path) =>
      readFileSync(path, "utf8")
        .split("\n")
        .flatMap((line, i) => (/throw new Error\(/.test(line) ? [`${relative(ROOT, path)}:${i + 1}`] : [])),
    );
    expect(plain, `throw a class of lib/errors.ts instead at: ${plain.join(", ")}`).toEqual([]);
  });
});
