import { realpathSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { type BuildOptions, build } from "esbuild";
import { entryHandler, type LambdaFunction, lambdaFunctions, writeEntries } from "../../infra/entries.ts";
import { nodejsBuild } from "../../infra/function-defaults.ts";
import { type BuiltBundle, cachedBundle, type FileHashes } from "./bundle-cache.ts";

/** This repository's own component (sst.config.ts): its entries are the bundles the benches and tests build. */
export const REPO_COMPONENT = "Jobs";

/** This repository's Lambda entry points, by the handler string its component gives SST. */
export const lambdaHandlers = lambdaFunctions.map((fn) => entryHandler(REPO_COMPONENT, fn));
export type LambdaHandler = string;

/**
 * Writes this repository's entries (app/index.ts's `app`, this checkout's functions/handlers.ts)
 * as its component does when the program runs, so they can be bundled without running it.
 */
export function writeRepoEntries(root: string): Record<LambdaFunction, string> {
  return writeEntries({
    root,
    component: REPO_COMPONENT,
    appFile: join(root, "app", "index.ts"),
    appExport: "app",
    handlers: join(root, "functions", "handlers.ts"),
  });
}

/** The function's short name: ".sst/skyforge/Jobs/worker.handler" → "worker". */
export function functionName(handler: string): string {
  const file = handler.slice(0, handler.lastIndexOf("."));
  return file.slice(file.lastIndexOf("/") + 1);
}

/**
 * The banner the SST CLI puts on every ESM bundle it builds, functions and the program alike: it
 * gives bundled CommonJS code `require`, `__filename` and `__dirname`.
 */
export const SST_ESM_BANNER = [
  "import { createRequire as topLevelCreateRequire } from 'module';",
  "const require = topLevelCreateRequire(import.meta.url);",
  'import { fileURLToPath as topLevelFileUrlToPath, URL as topLevelURL } from "url"',
  "const __filename = topLevelFileUrlToPath(import.meta.url)",
  'const __dirname = topLevelFileUrlToPath(new topLevelURL(".", import.meta.url))',
].join("\n");

/** The `nodejs` settings of an sst.aws.Function that change its bundle. */
export interface NodeBuildProperties {
  minify?: boolean;
  format?: "esm" | "cjs";
  sourcemap?: boolean;
  esbuild?: { external?: readonly string[]; keepNames?: boolean };
}

/**
 * SST's own esbuild settings for a Node function (its CLI's Runtime.Build for ESM, outside dev):
 * bundle, platform node, ESM, mainFields module then main, keepNames unless the function's
 * `esbuild` turns it off, a linked sourcemap only when asked, minify when asked, and SST's banner,
 * which gives bundled CommonJS code `require`, `__filename` and `__dirname` (a CommonJS dependency
 * that requires a Node builtin otherwise fails at import with `Dynamic require of "node:…" is not
 * supported`; with mainFields module-first and the SDK external, none of ours does today, but the
 * banner is part of what SST ships).
 * The target is the runtime's language level (es2024 for nodejs24.x).
 */
export function sstNodeBuildOptions(
  entry: string,
  outfile: string,
  props: NodeBuildProperties = nodejsBuild,
): BuildOptions {
  return {
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "es2024",
    mainFields: ["module", "main"],
    keepNames: props.esbuild?.keepNames ?? true,
    metafile: true,
    minify: props.minify ?? false,
    sourcemap: props.sourcemap ? "linked" : false,
    external: ["sharp", "pg-native", ...(props.esbuild?.external ?? [])],
    logLevel: "silent",
    banner: { js: SST_ESM_BANNER },
  };
}

export interface BuiltFunction {
  handler: LambdaHandler | string;
  /** The bundle's path: <outDir>/functions/<name>.mjs, as SST lays it out. */
  file: string;
  /** The handler string Lambda is given for that bundle (".sst/skyforge/Jobs/worker.handler"). */
  lambdaHandler: string;
  bytes: number;
  /** The files bundled in, as absolute paths (packages' included). */
  inputs: string[];
  /** Served from the bundle cache (scripts/deploy/bundle-cache.ts): esbuild didn't run. */
  cached: boolean;
}

/**
 * Bundles one handler as SST does, into outDir. outDir must lie inside the project (for example
 * under node_modules/.cache), so the externals (the runtime's AWS SDK) resolve from node_modules
 * the way Lambda resolves them from its own.
 */
export async function buildFunction(
  root: string,
  handler: string,
  outDir: string,
  props: NodeBuildProperties = nodejsBuild,
  hashes?: FileHashes,
): Promise<BuiltFunction> {
  const file = handler.slice(0, handler.lastIndexOf("."));
  const outfile = join(outDir, `${file}.mjs`);
  const options = sstNodeBuildOptions(`${file}.ts`, outfile, props);
  const bundle = () => bundleOnce(root, options);
  const { outfile: _where, ...settings } = options;
  // Bundled paths are relative to the project: a copy that links another's node_modules writes them otherwise.
  const key = { settings, modules: relative(root, realpathSync(join(root, "node_modules"))) };
  // A map's paths depend on where the bundle is written: such a bundle is built every time.
  const built = props.sourcemap
    ? { ...pick(await bundle()), cached: false }
    : await cachedBundle(root, key, outfile, bundle, hashes);
  return { handler, file: outfile, lambdaHandler: handler, ...built };
}

const pick = ({ bytes, inputs }: BuiltBundle) => ({ bytes, inputs });

async function bundleOnce(root: string, options: BuildOptions): Promise<BuiltBundle> {
  const result = await build({ absWorkingDir: root, ...options });
  const output = Object.entries(result.metafile?.outputs ?? {}).find(([path]) => path.endsWith(".mjs"));
  const inputs = Object.keys(output?.[1].inputs ?? {}).map((input) => resolve(root, input));
  const read = Object.keys(result.metafile?.inputs ?? {}).map((input) => resolve(root, input));
  return { bytes: output?.[1].bytes ?? 0, inputs, read };
}
