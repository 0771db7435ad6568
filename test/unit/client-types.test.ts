import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { expect, test } from "vitest";

/**
 * The client is typed by the app: a wrong payload, an unknown kind or a misspelled queue (or status,
 * or priority) fails to compile, through createClient<typeof app> and createClient({ app }) alike.
 * The fixture marks each line that must fail.
 */
const fixture = fileURLToPath(new URL("../fixtures/client-typos/typos.ts", import.meta.url));
const tsconfig = fileURLToPath(new URL("../../tsconfig.json", import.meta.url));

function compilerOptions(): ts.CompilerOptions {
  const { config } = ts.readConfigFile(tsconfig, ts.sys.readFile);
  return ts.parseJsonConfigFileContent(config, ts.sys, fileURLToPath(new URL("../..", import.meta.url)))
    .options;
}

test("every typo in the fixture is a compile error, and nothing else is", () => {
  const program = ts.createProgram([fixture], compilerOptions());
  const source = program.getSourceFile(fixture);
  if (!source) throw new Error("fixture not compiled");
  const failing = new Map<number, string[]>();
  for (const d of ts.getPreEmitDiagnostics(program, source)) {
    if (d.file?.fileName !== source.fileName || d.start === undefined) continue;
    const line = source.getLineAndCharacterOfPosition(d.start).line + 1;
    failing.set(line, [...(failing.get(line) ?? []), ts.flattenDiagnosticMessageText(d.messageText, " ")]);
  }
  const lines = readFileSync(fixture, "utf8").split("\n");
  const marked = lines.flatMap((text, i) => (text.endsWith("// typo") ? [i + 1] : []));
  expect(marked.length).toBe(17);
  expect([...failing.keys()].sort((a, b) => a - b)).toEqual(marked);
  const messageAt = (needle: string) => failing.get(lines.findIndex((l) => l.includes(needle)) + 1)?.join();
  expect(messageAt(`enqueue("flakey"`)).toMatch(
    /'"flakey"' is not assignable to parameter of type 'KindName</,
  );
  expect(messageAt(`kind: "flakey" }`)).toMatch(/"flakey".*Did you mean '"flaky"'/);
  expect(messageAt(`pause("defualt")`)).toMatch(/"defualt".*'"default" \| "heavy"'/);
  expect(messageAt(`{ failTimes: "2" }`)).toMatch(/'string' is not assignable to type 'number'/);
}, 60_000);
