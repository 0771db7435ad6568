import { existsSync, mkdirSync, rmSync } from "node:fs";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { type BuildOptions, build, formatMessages, type Message, type Metafile, type Plugin } from "esbuild";
import type { App } from "../lib/declarations/define-app.ts";
import { ConfigError } from "../lib/errors.ts";

/**
 * The user's app module: the TypeScript (or JavaScript) file that exports the `defineApp` value, as
 * `default` or as `app`. `skyforge dev`, `check-deploy` and the SST component load it from the
 * user's own project, where no TypeScript runtime is installed: esbuild bundles the module and
 * everything it imports from the user's tree into one ESM file, which is imported. Packages stay
 * imports (resolved from the user's node_modules, so `skyforge` is the one copy the caller runs),
 * and so do this repo's engine sources when the app is this repo's own `app/` (the running engine's
 * error classes and builders must be the very modules the handlers use).
 *
 * A new bundle per load, under a new name: Node caches a module by its URL, so reloading a changed
 * kind file means importing a new file (the old one's memory is kept; a dev session reloads rarely).
 * The file is removed once imported (its source map is inline), so reloads leave none behind.
 */

/** The engine's own sources (this repo's lib/), left as imports when an app bundle reaches them. */
const engineSources = fileURLToPath(new URL("../lib/", import.meta.url));
/**
 * Whether this process runs lib/'s own .ts files with Node's loader: natively (`npm start` and the
 * pool it starts: an entry that is a .ts file, run by Node 24's type stripping) or through tsx (the
 * CLI's fallback). Then the engine the caller runs is those files and the app bundle must import the
 * very same ones. Otherwise (a bundle: the CLI's, a package's; vitest's module runner, whose entry
 * is its worker) the caller has its own copy, and an app bundle that imported lib/'s .ts files
 * natively would run a second engine: lib/ is bundled into it.
 */
const runsFromSource =
  process.execArgv.some((arg) => /[\\/]tsx[\\/]|^tsx$/.test(arg)) || /\.ts$/.test(process.argv[1] ?? "");

export interface LoadedAppModule {
  app: App;
  /** The module's absolute path. */
  file: string;
  /** Every file of the user's tree the bundle was built from: what a reload watches. */
  inputs: string[];
}

/** The module did not compile, or exports no `defineApp` value: one message naming the file. */
export class AppModuleError extends ConfigError {
  override readonly name: string = "AppModuleError";
}

/** Where a bundle is written: the nearest node_modules above the module, so its packages resolve. */
export function cacheDir(file: string): string {
  let dir = dirname(file);
  for (;;) {
    if (existsSync(join(dir, "node_modules"))) return join(dir, "node_modules", ".cache", "skyforge");
    const parent = dirname(dir);
    if (parent === dir) return join(dirname(file), ".skyforge-cache");
    dir = parent;
  }
}

const engineSourcesExternal: Plugin = {
  name: "skyforge-engine-external",
  setup(b) {
    b.onResolve({ filter: /^(\.\.?)?\// }, (args) => {
      const path = resolve(args.resolveDir, args.path);
      return path.startsWith(engineSources) ? { path: pathToFileURL(path).href, external: true } : undefined;
    });
  },
};

/** The esbuild options of every app bundle: here built async, in app-declarations.ts sync. */
export function appBundleOptions(file: string, bundle: string) {
  return {
    entryPoints: [file],
    outfile: bundle,
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node20",
    packages: "external",
    metafile: true,
    logLevel: "silent",
  } as const satisfies BuildOptions;
}

/** The files of the user's tree a bundle was built from (its packages left out): what a reload watches. */
export function userInputs(metafile: Metafile | undefined): string[] {
  return Object.keys(metafile?.inputs ?? {})
    .map((input) => resolve(input))
    .filter((input) => !input.split(sep).includes("node_modules"));
}

/** An esbuild failure as one error naming the module: its messages (`formatted`), else its own. */
export function compileFailure(shown: string, err: unknown, formatted: string[] | undefined): AppModuleError {
  return formatted
    ? new AppModuleError(`${shown} does not compile:\n${formatted.join("").trimEnd()}`)
    : new AppModuleError(`${shown}: ${(err as Error).message}`);
}

/** esbuild's messages of a failed build, if it is one. */
export function buildErrors(err: unknown): Message[] | undefined {
  return (err as { errors?: Message[] }).errors;
}

let loads = 0;

/** Bundles the module at `path` and returns its inputs and the bundle's file (throws AppModuleError). */
export async function bundleAppModule(path: string): Promise<{ bundle: string; inputs: string[] }> {
  const file = resolve(path);
  if (!existsSync(file)) throw new AppModuleError(`${path}: no such app module`);
  const outDir = cacheDir(file);
  mkdirSync(outDir, { recursive: true });
  loads += 1;
  const bundle = join(outDir, `${basename(file).replace(/\.[^.]+$/, "")}.${process.pid}.${loads}.mjs`);
  try {
    const result = await build({
      ...appBundleOptions(file, bundle),
      sourcemap: "inline",
      plugins: runsFromSource ? [engineSourcesExternal] : [],
    });
    return { bundle, inputs: userInputs(result.metafile) };
  } catch (err) {
    const errors = buildErrors(err);
    const formatted = errors && (await formatMessages(errors, { kind: "error", color: false }));
    throw compileFailure(path, err, formatted);
  }
}

/** Whether a value has the shape `defineApp` returns. */
export function isApp(value: unknown): value is App {
  const v = value as Partial<Record<keyof App, unknown>> | null;
  return (
    typeof v === "object" &&
    v !== null &&
    Array.isArray(v.queues) &&
    Array.isArray(v.kinds) &&
    Array.isArray(v.poolKinds) &&
    Array.isArray(v.schedules) &&
    Array.isArray(v.rateLimits)
  );
}

/**
 * Loads the app module at `path`: its `default` export, else its `app` export, must be the value
 * `defineApp` returned (which has already checked the declarations, so a refused declaration is
 * that ConfigError, its message prefixed with the file).
 */
export async function loadAppModule(path: string): Promise<LoadedAppModule> {
  const file = resolve(path);
  const { bundle, inputs } = await bundleAppModule(file);
  const shown = shownPath(file);
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(bundle).href)) as Record<string, unknown>;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    throw new AppModuleError(`${shown}: ${message}`);
  } finally {
    rmSync(bundle, { force: true });
  }
  const app = [mod.default, mod.app].find(isApp);
  if (!app) throw new AppModuleError(noAppMessage(shown));
  return { app, file, inputs };
}

/** A module's path as messages show it: relative to the working directory when inside it. */
export function shownPath(file: string): string {
  const near = relative(process.cwd(), file);
  return near && !near.startsWith("..") ? near : file;
}

/** What a module that exports no `defineApp` value is told, naming it. */
export function noAppMessage(shown: string): string {
  return `${shown} exports no defineApp value: export it as \`export default defineApp({...})\` or \`export const app = defineApp({...})\``;
}
