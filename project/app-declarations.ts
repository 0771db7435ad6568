import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { buildSync, formatMessagesSync } from "esbuild";
import type { App } from "../lib/declarations/define-app.ts";
import {
  AppModuleError,
  appBundleOptions,
  buildErrors,
  cacheDir,
  compileFailure,
  isApp,
  noAppMessage,
  shownPath,
  userInputs,
} from "./app-module.ts";

/**
 * A user's app module read for its declarations alone, synchronously: what the SST component needs
 * while its constructor runs (infra/skyforge.ts), before it plans a single resource. An SST program
 * can't await a module there, and an app module may use top-level await (this repo's does), so the
 * module is bundled with esbuild's buildSync (packages left as imports) and imported by a child
 * Node process, which writes the declarations as JSON: queues, kinds, pool kinds, schedules and
 * rate limits as written, without zod schemas. A function (a handler, a debounce's key) comes back
 * as a stand-in function, so the validator sees that one is there.
 *
 * The errors are loadAppModule's (project/app-module.ts): one AppModuleError naming the file, for a
 * module that is missing, doesn't compile, throws (a declaration defineApp refuses) or exports no
 * defineApp value.
 */

/** An app's declarations, as infra reads them: the App shape, kinds without handlers. */
export type AppDeclarations = App;

export interface LoadedDeclarations {
  app: AppDeclarations;
  /** The module's absolute path. */
  file: string;
  /** Which export holds the app: a generated entry imports that one. */
  exportName: "default" | "app";
  /** Every file of the bundle that is not a package: the user's tree, and engine sources it imports by path. */
  inputs: string[];
}

/** What the child writes: the app-shaped exports, or the error its import threw. */
interface ChildReport {
  exports?: Partial<Record<"default" | "app", unknown>>;
  error?: string;
}

/** A stand-in for a function the child saw; revived as a function that says what it was. */
const FUNCTION_MARK = "$skyforgeFunction";

/**
 * The child: imports the bundle and writes each of `default` and `app` as plain data. Zod schemas
 * are left out (infra never reads them); a function (a handler, a key) becomes a mark.
 */
const CHILD_SOURCE = `
import { writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
const [bundle, out] = process.argv.slice(2);
const MARK = ${JSON.stringify(FUNCTION_MARK)};
function plain(value, seen, depth) {
  if (typeof value === "function") return { [MARK]: value.name || "anonymous" };
  if (value === null || typeof value !== "object") return value;
  if (seen.has(value) || depth > 12) return null;
  if ("_zod" in value || "_def" in value) return null;
  seen.add(value);
  const copy = Array.isArray(value)
    ? value.map((v) => plain(v, seen, depth + 1))
    : Object.fromEntries(
        Object.entries(value).map(([k, v]) => [k, plain(v, seen, depth + 1)]),
      );
  seen.delete(value);
  return copy;
}
let report;
try {
  const mod = await import(pathToFileURL(bundle).href);
  const exports = {};
  for (const name of ["default", "app"]) {
    if (mod[name] !== undefined) exports[name] = plain(mod[name], new Set(), 1);
  }
  report = { exports };
} catch (error) {
  report = { error: error instanceof Error ? error.message : String(error) };
}
writeFileSync(out, JSON.stringify(report));
`;

/** The marks back as functions: the validator checks that a key function is there, never calls it. */
function revive(value: unknown): unknown {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map(revive);
  const record = value as Record<string, unknown>;
  if (typeof record[FUNCTION_MARK] === "string") {
    const name = record[FUNCTION_MARK];
    return {
      [name]: () => {
        throw new Error(`${name} is a declaration read by infra, not the app's function`);
      },
    }[name];
  }
  return Object.fromEntries(Object.entries(record).map(([k, v]) => [k, revive(v)]));
}

/** Bundles the module into one ESM file beside its packages (throws AppModuleError naming it). */
function bundleSync(file: string, shown: string): { bundle: string; inputs: string[] } {
  const outDir = cacheDir(file);
  mkdirSync(outDir, { recursive: true });
  const bundle = join(outDir, `${basename(file).replace(/\.[^.]+$/, "")}.declarations.${process.pid}.mjs`);
  try {
    const result = buildSync(appBundleOptions(file, bundle));
    return { bundle, inputs: userInputs(result.metafile) };
  } catch (err) {
    const errors = buildErrors(err);
    throw compileFailure(shown, err, errors && formatMessagesSync(errors, { kind: "error", color: false }));
  }
}

/**
 * Loads the declarations of the app module at `path` (relative to `cwd`), in a child process run
 * by this process's runtime (`process.execPath`: Node, or Bun under an SST CLI that uses it).
 */
export function loadAppDeclarationsSync(path: string, cwd: string = process.cwd()): LoadedDeclarations {
  const file = resolve(cwd, path);
  const shown = shownPath(file);
  if (!existsSync(file)) throw new AppModuleError(`${shown}: no such app module`);
  const { bundle, inputs } = bundleSync(file, shown);
  const child = join(cacheDir(file), `declarations-child.${process.pid}.mjs`);
  const out = `${bundle}.json`;
  writeFileSync(child, CHILD_SOURCE);
  let report: ChildReport;
  try {
    execFileSync(process.execPath, [child, bundle, out], { cwd, stdio: ["ignore", "ignore", "pipe"] });
    report = JSON.parse(readFileSync(out, "utf8")) as ChildReport;
  } catch (err) {
    const stderr = String((err as { stderr?: unknown }).stderr ?? "").trim();
    throw new AppModuleError(`${shown}: ${stderr || (err as Error).message}`);
  } finally {
    for (const f of [child, bundle, out]) rmSync(f, { force: true });
  }
  if (report.error !== undefined) throw new AppModuleError(`${shown}: ${report.error}`);
  for (const exportName of ["default", "app"] as const) {
    const value = revive(report.exports?.[exportName]);
    if (isApp(value)) return { app: value, file, exportName, inputs };
  }
  throw new AppModuleError(noAppMessage(shown));
}
