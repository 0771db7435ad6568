/**
 * A Dockerfile read the way BuildKit reads it, far enough for the checks in test/e2e/pool-image.test.ts:
 * parser directives (`# escape=`), comment and blank lines (also inside a continuation), line
 * continuations joined without a separator (so a shell-form RUN is the exact string `/bin/sh -c`
 * gets), keywords in any case, and stages (`FROM [--platform=…] image [AS name]`). Variable
 * substitution ($VAR) is not done: a value that needs it is returned as written.
 */

export interface Instruction {
  /** Upper-cased: COPY, RUN, WORKDIR, … */
  keyword: string;
  /** Everything after the keyword, continuations joined. */
  args: string;
  /** 1-based line the instruction starts on. */
  line: number;
}

export interface Stage {
  index: number;
  /** The `AS` name, lower-cased as BuildKit compares them. */
  name: string | undefined;
  image: string;
  platform: string | undefined;
  from: Instruction;
  /** The stage's instructions after its FROM. */
  instructions: Instruction[];
}

export interface Copy {
  /** `--from=`: a stage name or index (another image is not supported here). */
  from: string | undefined;
  sources: string[];
  dest: string;
  line: number;
}

/** A RUN or CMD: shell form (run by `/bin/sh -c`) or exec form (a JSON array). */
export type Command = { shell: string } | { argv: string[] };

const DIRECTIVE = /^#\s*([a-zA-Z]+)\s*=\s*(.*?)\s*$/;

/** The Dockerfile's stages in order; instructions before the first FROM (global ARGs) are dropped. */
export function parseDockerfile(text: string): Stage[] {
  const lines = text.split(/\r?\n/);
  let escapeChar = "\\";
  let first = 0;
  // Directives count only at the very top, before any blank line, comment or instruction.
  for (; first < lines.length; first++) {
    const m = DIRECTIVE.exec(lines[first] ?? "");
    if (!m) break;
    if (m[1]?.toLowerCase() === "escape") escapeChar = m[2] ?? "\\";
  }
  const stages: Stage[] = [];
  let pending: { text: string; line: number } | undefined;
  const finish = (text: string, line: number) => {
    const m = /^\s*(\S+)\s*([\s\S]*)$/.exec(text);
    if (!m) return;
    const instruction = { keyword: (m[1] as string).toUpperCase(), args: (m[2] as string).trim(), line };
    if (instruction.keyword === "FROM") stages.push(parseFrom(instruction, stages.length));
    else stages.at(-1)?.instructions.push(instruction);
  };
  for (let i = first; i < lines.length; i++) {
    const raw = lines[i] as string;
    const trimmed = raw.trim();
    if (trimmed === "" || trimmed.startsWith("#")) continue;
    const body = raw.trimEnd();
    const continues = body.endsWith(escapeChar);
    const piece = continues ? body.slice(0, -escapeChar.length) : raw;
    pending = pending ? { text: pending.text + piece, line: pending.line } : { text: piece, line: i + 1 };
    if (!continues) {
      finish(pending.text, pending.line);
      pending = undefined;
    }
  }
  if (pending) finish(pending.text, pending.line);
  return stages;
}

function parseFrom(from: Instruction, index: number): Stage {
  const { flags, rest } = leadingFlags(from.args);
  const [image, as, name, ...extra] = rest.split(/\s+/);
  const named = as?.toLowerCase() === "as" && name !== undefined;
  if (!image || (as !== undefined && !named) || extra.length > 0)
    throw new Error(`line ${from.line}: FROM ${from.args}: expected FROM [--platform=…] image [AS name]`);
  return {
    index,
    name: named ? name.toLowerCase() : undefined,
    image,
    platform: flags.get("platform"),
    from,
    instructions: [],
  };
}

/** `--name=value` (or a bare `--name`) flags before the arguments. */
function leadingFlags(args: string): { flags: Map<string, string>; rest: string } {
  const flags = new Map<string, string>();
  let rest = args.trim();
  for (;;) {
    const m = /^--([a-zA-Z-]+)(?:=(\S*))?(?:\s+|$)/.exec(rest);
    if (!m) return { flags, rest };
    flags.set(m[1] as string, m[2] ?? "");
    rest = rest.slice(m[0].length);
  }
}

/** A JSON array of strings, or undefined when `args` is not one (then it is shell form). */
function execForm(args: string): string[] | undefined {
  if (!args.startsWith("[")) return undefined;
  try {
    const value: unknown = JSON.parse(args);
    if (Array.isArray(value) && value.every((v) => typeof v === "string")) return value;
  } catch {
    // BuildKit, too, reads an invalid JSON array as shell form.
  }
  return undefined;
}

export function parseCopy(instruction: Instruction): Copy {
  if (instruction.keyword !== "COPY") throw new Error(`line ${instruction.line}: not a COPY`);
  const { flags, rest } = leadingFlags(instruction.args);
  const parts = execForm(rest) ?? rest.split(/\s+/).filter(Boolean);
  if (parts.length < 2) throw new Error(`line ${instruction.line}: COPY needs a source and a destination`);
  return {
    from: flags.get("from"),
    sources: parts.slice(0, -1),
    dest: parts.at(-1) as string,
    line: instruction.line,
  };
}

export function parseCommand(instruction: Instruction): Command {
  const { rest } =
    instruction.keyword === "RUN" ? leadingFlags(instruction.args) : { rest: instruction.args };
  const argv = execForm(rest);
  return argv ? { argv } : { shell: rest };
}

/** `ENV a=1 b="two words"`, or the legacy `ENV a 1`. */
export function parseEnv(instruction: Instruction): Record<string, string> {
  const args = instruction.args;
  const pairs = [...args.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("(?:[^"\\]|\\.)*"|'[^']*'|\S*)/g)];
  if (pairs.length === 0) {
    const m = /^(\S+)\s+([\s\S]*)$/.exec(args);
    if (!m) throw new Error(`line ${instruction.line}: ENV ${args}: expected name=value`);
    return { [m[1] as string]: m[2] as string };
  }
  return Object.fromEntries(pairs.map(([, k, v]) => [k, unquote(v as string)]));
}

function unquote(v: string): string {
  if (v.startsWith('"') && v.endsWith('"')) return v.slice(1, -1).replace(/\\(.)/g, "$1");
  if (v.startsWith("'") && v.endsWith("'")) return v.slice(1, -1);
  return v;
}

/** The stage `ref` (a name or an index, as `--from=` gives it) names, if it comes before `before`. */
export function stageNamed(stages: readonly Stage[], ref: string, before: number): Stage | undefined {
  const found = /^\d+$/.test(ref) ? stages[Number(ref)] : stages.find((s) => s.name === ref.toLowerCase());
  return found && found.index < before ? found : undefined;
}
