import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { expect, test } from "vitest";

/**
 * Names in the app are types: a misspelled queue, kind, schedule kind or rate-limit scope, or a
 * payload of the wrong shape, fails to compile. The fixture marks each line that must fail.
 */
const fixture = fileURLToPath(new URL("../fixtures/app-typos/typos.ts", import.meta.url));
const tsconfig = fileURLToPath(new URL("../../tsconfig.json", import.meta.url));

function compilerOptions(): ts.CompilerOptions {
  const { config } = ts.readConfigFile(tsconfig, ts.sys.readFile);
  return ts.parseJsonConfigFileContent(config, ts.sys, fileURLToPath(new URL("../..", import.meta.url)))
    .options;
}

test("every misspelled name in the fixture is a compile error, and nothing else is", () => {
  const program = ts.createProgram([fixture], compilerOptions());
  const source = program.getSourceFile(fixture);
  if (!source) throw new Error("fixture not compiled");
  const failing = new Map<number, string[]>();
  for (const d of ts.getPreEmitDiagnostics(program, source)) {
    if (d.file?.fileName !== source.fileName || d.start === undefined) continue;
    const line = source.getLineAndCharacterOfPosition(d.start).line + 1;
    failing.set(line, [...(failing.get(line) ?? []), ts.flattenDiagnosticMessageText(d.messageText, " ")]);
  }
  const marked = readFileSync(fixture, "utf8")
    .split("\n")
    .flatMap((text, i) => (text.endsWith("// typo") ? [i + 1] : []));
  expect(marked.length).toBe(11);
  expect([...failing.keys()].sort((a, b) => a - b)).toEqual(marked);
  expect(failing.get(marked[0] as number)?.join()).toMatch(/"partner-apj".*"partner-api"/);
}, 60_000);
