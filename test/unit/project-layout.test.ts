import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { docBlocks } from "../support/doc-blocks.ts";
import { projectRoot } from "../support/project-copy.ts";

/** The layout page's picture can't be run, but it can't drift: it names every folder git tracks at the root. */
describe("docs/guide/project-layout.md", () => {
  it("names every top-level folder of the repository, and no other", () => {
    const tracked = execFileSync("git", ["ls-files"], { cwd: projectRoot, encoding: "utf8" })
      .split("\n")
      .filter((path) => path.includes("/") && !path.startsWith("."))
      .map((path) => path.slice(0, path.indexOf("/")));
    const folders = [...new Set(tracked)].sort();
    const picture = docBlocks("docs/guide/project-layout.md").find((b) =>
      b.marker?.includes("a picture of the folders"),
    );
    const pictured = [...(picture?.text.matchAll(/^(\w+)\/ /gm) ?? [])].map((m) => m[1] ?? "").sort();
    expect(pictured).toEqual(folders);
  });
});
