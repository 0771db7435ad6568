import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

/**
 * Where `skyforge dev` finds the user's app module, first match wins:
 * 1. `--app PATH` (relative to the working directory);
 * 2. the `app` option of `new Skyforge("…", { app: "…" })` in the project's `sst.config.ts` (the
 *    nearest one at or above the working directory; the path is relative to its folder), read as
 *    text, never run (running it needs SST's globals);
 * 3. the first of DEFAULT_APP_MODULES that exists under the project's folder.
 */
export const DEFAULT_APP_MODULES = ["src/jobs/app.ts", "skyforge.app.ts"] as const;

export type FoundApp =
  | { found: true; file: string; from: "--app" | "sst.config.ts" | "default"; projectDir: string }
  /** `reason` says what was looked at, for the usage line. */
  | { found: false; reason: string; projectDir: string };

export function findAppModule(cwd: string, explicit?: string): FoundApp {
  const config = nearestSstConfig(cwd);
  const projectDir = config ? dirname(config) : cwd;
  if (explicit !== undefined) {
    const file = resolve(cwd, explicit);
    return existsSync(file)
      ? { found: true, file, from: "--app", projectDir }
      : { found: false, reason: `--app ${explicit}: no such file`, projectDir };
  }
  if (config) {
    const named = appsInSstConfig(readFileSync(config, "utf8"));
    if (named.kind === "ambiguous")
      return { found: false, reason: `${config} names ${named.detail}: pass --app`, projectDir };
    if (named.kind === "named") {
      const file = resolve(projectDir, named.app);
      return existsSync(file)
        ? { found: true, file, from: "sst.config.ts", projectDir }
        : { found: false, reason: `${config} names app ${named.app}, which does not exist`, projectDir };
    }
  }
  for (const candidate of DEFAULT_APP_MODULES) {
    const file = join(projectDir, candidate);
    if (existsSync(file)) return { found: true, file, from: "default", projectDir };
  }
  const looked = [
    config ? "sst.config.ts's new Skyforge(…, { app })" : "no sst.config.ts",
    ...DEFAULT_APP_MODULES,
  ];
  return { found: false, reason: `no app module (looked at ${looked.join(", ")})`, projectDir };
}

function nearestSstConfig(from: string): string | undefined {
  for (let dir = resolve(from); ; dir = dirname(dir)) {
    const file = join(dir, "sst.config.ts");
    if (existsSync(file)) return file;
    if (dirname(dir) === dir) return undefined;
  }
}

export type SstConfigApp =
  | { kind: "named"; app: string }
  | { kind: "none" }
  /** Two components naming different apps, or one naming it by an expression, not a string. */
  | { kind: "ambiguous"; detail: string };

/**
 * The app module `sst.config.ts` gives its `Skyforge` components: each `new Skyforge(` call's
 * argument list (comments removed, strings kept whole) and, in it, the `app:` property's string.
 */
export function appsInSstConfig(source: string): SstConfigApp {
  const code = withoutComments(source);
  // The same text with every string's characters masked, so nothing inside a string is read as code.
  const masked = maskStrings(code);
  const apps = new Set<string>();
  let unreadable = 0;
  for (const match of masked.matchAll(/\bnew\s+Skyforge\s*\(/g)) {
    const start = (match.index ?? 0) + match[0].length;
    const args = masked.slice(start, argumentsEnd(masked, start));
    const app = /\bapp\s*:\s*(["'`])/.exec(args);
    const open = app ? start + app.index + app[0].length - 1 : -1;
    const value = app ? code.slice(open + 1, stringEnd(code, open)) : "";
    if (value && !(app?.[1] === "`" && value.includes("${"))) apps.add(value);
    else unreadable += 1;
  }
  if (apps.size === 0 && unreadable === 0) return { kind: "none" };
  if (apps.size === 1 && unreadable === 0) return { kind: "named", app: [...apps][0] as string };
  const parts = [
    ...(apps.size > 0 ? [`apps ${[...apps].join(", ")}`] : []),
    ...(unreadable > 0 ? [`${unreadable} Skyforge component(s) whose app is not a plain string`] : []),
  ];
  return { kind: "ambiguous", detail: parts.join(" and ") };
}

/** Where the call whose arguments start at `start` closes (strings are masked: no parenthesis in them counts). */
function argumentsEnd(masked: string, start: number): number {
  let depth = 1;
  for (let i = start; i < masked.length; i++) {
    if (masked[i] === "(") depth += 1;
    else if (masked[i] === ")" && --depth === 0) return i;
  }
  return masked.length;
}

/** `code` with each string's characters (not its quotes) replaced, so indices stay the same. */
function maskStrings(code: string): string {
  let out = "";
  for (let i = 0; i < code.length; i++) {
    const c = code[i] as string;
    if (c !== '"' && c !== "'" && c !== "`") {
      out += c;
      continue;
    }
    const end = stringEnd(code, i);
    out += c + "_".repeat(Math.max(0, Math.min(end, code.length) - i - 1)) + (end < code.length ? c : "");
    i = end;
  }
  return out;
}

/** The index of the quote closing the string that opens at `start`. */
function stringEnd(code: string, start: number): number {
  const quote = code[start];
  for (let i = start + 1; i < code.length; i++) {
    if (code[i] === "\\") i += 1;
    else if (code[i] === quote) return i;
  }
  return code.length;
}

/** The source with `//` and `/* *\/` comments blanked out, so a commented-out component is not read. */
function withoutComments(source: string): string {
  let out = "";
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '"' || c === "'" || c === "`") {
      const end = stringEnd(source, i);
      out += source.slice(i, end + 1);
      i = end;
    } else if (c === "/" && source[i + 1] === "/") {
      const end = source.indexOf("\n", i);
      i = end === -1 ? source.length : end - 1;
    } else if (c === "/" && source[i + 1] === "*") {
      const end = source.indexOf("*/", i + 2);
      i = end === -1 ? source.length : end + 1;
      out += " ";
    } else out += c;
  }
  return out;
}
