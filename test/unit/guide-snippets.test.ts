import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { afterAll, describe, expect, it } from "vitest";
import { docBlocks } from "../support/doc-blocks.ts";
import { projectRoot } from "../support/project-copy.ts";

/**
 * The TypeScript snippets of the README and the guides that are whole files type-check as files of
 * this project, against the app and the client as they are: each is written out (its `./` imports
 * pointing at the repo's root, a kind's `../define.ts` at app/define.ts) and compiled with the
 * project's compiler options. Every block marked `<!-- checked by test/unit/guide-snippets.test.ts -->`
 * in these documents compiles here.
 */
const DOCS = [
  "docs/guide/enqueue.md",
  "docs/guide/deploy.md",
  "docs/guide/lanes-and-cost.md",
  "docs/guide/durable-jobs.md",
  "docs/guide/flow-control.md",
  "docs/guide/finding-runs.md",
  "docs/guide/scale.md",
];
const MARK = "checked by test/unit/guide-snippets.test.ts";
const dir = join(projectRoot, "test/.snippets");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const snippets = DOCS.flatMap((doc) =>
  docBlocks(doc)
    .filter((b) => b.lang === "ts" && b.marker?.startsWith(MARK))
    .map((b) => ({ name: `${doc}:${b.line}`, text: b.text })),
);

function compile(files: readonly string[]): Map<string, string[]> {
  const { config } = ts.readConfigFile(join(projectRoot, "tsconfig.json"), ts.sys.readFile);
  const options = ts.parseJsonConfigFileContent(config, ts.sys, projectRoot).options;
  const program = ts.createProgram([...files], options);
  const errors = new Map<string, string[]>();
  for (const file of files) {
    const source = program.getSourceFile(file);
    const messages = ts
      .getPreEmitDiagnostics(program, source)
      .filter((d) => d.file?.fileName === source?.fileName)
      .map((d) => {
        const line =
          d.start === undefined ? 0 : (source?.getLineAndCharacterOfPosition(d.start).line ?? 0) + 1;
        return `line ${line}: ${ts.flattenDiagnosticMessageText(d.messageText, " ")}`;
      });
    errors.set(file, messages);
  }
  return errors;
}

describe("the guides' TypeScript snippets", () => {
  it("finds one in each document it names", () => {
    for (const doc of DOCS)
      expect(
        snippets.some((s) => s.name.startsWith(`${doc}:`)),
        doc,
      ).toBe(true);
  });

  it("compile as files of the project", () => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "package.json"), '{ "type": "module" }');
    const files = snippets.map((s, i) => {
      const file = join(dir, `snippet-${i}.ts`);
      const text = s.text
        .replaceAll('from "./', `from "${projectRoot}/`)
        .replaceAll('from "../define.ts"', `from "${join(projectRoot, "app/define.ts")}"`);
      writeFileSync(file, `${text}\nexport {};\n`);
      return file;
    });
    const errors = compile(files);
    const failing = snippets
      .map((s, i) => ({ name: s.name, errors: errors.get(files[i] as string) ?? [] }))
      .filter((s) => s.errors.length > 0);
    expect(failing).toEqual([]);
  }, 60_000);
});
