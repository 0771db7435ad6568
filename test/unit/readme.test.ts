import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { docBlocks } from "../support/doc-blocks.ts";
import { projectRoot } from "../support/project-copy.ts";

/**
 * The front door can't drift (issue 30): the README stays short, its kind is the demo kind's file,
 * every link in the docs leads somewhere, and every code block says how it is checked: by a test
 * that reads its document, or why it can't be run here.
 */
const read = (path: string) => readFileSync(join(projectRoot, path), "utf8");
const guides = readdirSync(join(projectRoot, "docs/guide")).map((f) => `docs/guide/${f}`);
const SELF = "test/unit/readme.test.ts";

/** A document's heading anchors as GitHub makes them: lower case, punctuation gone, spaces to hyphens. */
function headingSlugs(path: string): Set<string> {
  const headings = read(path)
    .split("\n")
    .filter((l) => /^#{1,6} /.test(l))
    .map((l) =>
      l
        .replace(/^#+ /, "")
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\- ]/gu, "")
        .replaceAll(" ", "-"),
    );
  return new Set(headings);
}
const docs = [
  "README.md",
  "docs/architecture.md",
  "cli/README.md",
  "packages/client/README.md",
  "packages/skyforge/README.md",
  ...guides,
];

describe("the README", () => {
  it("is at most 250 lines", () => {
    expect(read("README.md").split("\n").length).toBeLessThanOrEqual(250);
  });

  it("shows app/kinds/echo.ts as it is, added by the line app/index.ts has", () => {
    const [kind] = docBlocks("README.md").filter((b) => b.lang === "ts");
    expect(kind?.text).toBe(read("app/kinds/echo.ts"));
    const line = /`(\(await import\("\.\/kinds\/echo\.ts"\)\)\.echo,)`/.exec(read("README.md"))?.[1];
    expect(read("app/index.ts")).toContain(`  ${line}\n`);
  });

  it("names the test command CI runs", () => {
    expect(read(".ci/run").trim().split("\n").at(-1)).toBe("npm test");
    expect(docBlocks("README.md").some((b) => b.text.includes("\nnpm test "))).toBe(true);
  });
});

describe.each(docs)("%s", (doc) => {
  it("links only to files that exist", () => {
    const text = read(doc);
    const missing = [...text.matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)]
      .map((m) => m[1] ?? "")
      .filter((target) => !/^[a-z]+:/.test(target))
      .filter((target) => !existsSync(join(projectRoot, dirname(doc), target)));
    expect(missing).toEqual([]);
  });

  it("links to headings that exist", () => {
    const text = read(doc);
    const broken = [...text.matchAll(/\]\(([^)#\s]*\.md)?#([^)\s]+)\)/g)]
      .map((m) => ({ file: m[1] ? join(dirname(doc), m[1]) : doc, anchor: m[2] ?? "" }))
      .filter(({ file, anchor }) => !headingSlugs(file).has(anchor))
      .map(({ file, anchor }) => `${file}#${anchor}`);
    expect(broken).toEqual([]);
  });

  it("says how each code block is checked", () => {
    const unchecked = docBlocks(doc)
      .filter((b) => {
        if (b.marker?.startsWith("not run: ") && b.marker.length > "not run: ".length + 10) return false;
        const test = /^checked by (test\/[\w./-]+\.ts)/.exec(b.marker ?? "")?.[1];
        // This file checks its own marks (below) in every document; another test names the document.
        return !(test && existsSync(join(projectRoot, test)) && (test === SELF || read(test).includes(doc)));
      })
      .map((b) => `line ${b.line}: ${b.marker ?? "(no marker)"}`);
    expect(unchecked).toEqual([]);
  });

  it("shows files as they are: a block that is a file, or lines of one", () => {
    const wrong = docBlocks(doc).flatMap((b) => {
      const mark = new RegExp(`^checked by ${SELF}: (it is|lines of) (.+?)$`).exec(b.marker ?? "");
      if (!mark) return [];
      const paths = (mark[2] as string).split(" and ");
      if (mark[1] === "it is")
        return b.text === read(paths[0] as string) ? [] : [`line ${b.line}: not ${mark[2]} as it is`];
      const lines = paths.flatMap((path) => read(path).split("\n")).map((l) => l.trim());
      const missing = b.text
        .split("\n")
        .map((l) => l.trim())
        .filter((l) => l && !l.startsWith("//") && !lines.includes(l));
      return missing.map((l) => `line ${b.line}: "${l}" is not a line of ${mark[2]}`);
    });
    expect(wrong).toEqual([]);
  });
});
