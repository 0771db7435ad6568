import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const root = fileURLToPath(new URL("../..", import.meta.url));

function compilerOptions(): ts.CompilerOptions {
  const { config } = ts.readConfigFile(`${root}/tsconfig.json`, ts.sys.readFile);
  return ts.parseJsonConfigFileContent(config, ts.sys, root).options;
}

export interface CompiledFixture {
  /** The fixture's lines, as written. */
  lines: string[];
  /** The 1-based lines that end with `// typo`: each must fail to compile. */
  marked: number[];
  /** The 1-based lines that did fail, with their messages. */
  failing: Map<number, string[]>;
}

/**
 * Compiles a type-test fixture with the project's compiler options (the fixtures are excluded from
 * the project's own type check) and reports which lines failed against which were marked to fail.
 */
export function compileTypoFixture(path: string): CompiledFixture {
  const program = ts.createProgram([path], compilerOptions());
  const source = program.getSourceFile(path);
  if (!source) throw new Error(`fixture ${path} not compiled`);
  const failing = new Map<number, string[]>();
  for (const d of ts.getPreEmitDiagnostics(program, source)) {
    if (d.file?.fileName !== source.fileName || d.start === undefined) continue;
    const line = source.getLineAndCharacterOfPosition(d.start).line + 1;
    failing.set(line, [...(failing.get(line) ?? []), ts.flattenDiagnosticMessageText(d.messageText, " ")]);
  }
  const lines = readFileSync(path, "utf8").split("\n");
  const marked = lines.flatMap((text, i) => (text.endsWith("// typo") ? [i + 1] : []));
  return { lines, marked, failing };
}
