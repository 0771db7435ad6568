import { spawnSync } from "node:child_process";
import { copyFile, mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { basename, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build, type Plugin } from "esbuild";
import { consoleSourceFiles } from "../console/assets.ts";
import { bundleRealtimeClient, REALTIME_MODULE } from "../console/realtime-bundle.ts";
import { isUpToDate, writeStamp } from "./build-stamp.ts";
import { type PackageManifest, undeclaredImports } from "./package-imports.ts";

/**
 * `npm run build:packages`: every package of this repo, each into its git-ignored dist/
 * (`npm run build:client`: the client's alone). One table says what each holds. JavaScript: the
 * entries bundled by esbuild into ESM with `splitting`, so the entries of one package share one copy
 * of what they have in common (the engine's error classes are the same classes for the CLI, the
 * handlers and the user's kinds), every package left as an import. Types: tsc's declarations of the
 * entries that have them, their `.ts` import paths rewritten to `.js` as in any published
 * package's declarations (tsc keeps them as written). Then the check that every package the output
 * loads is one the manifest declares (scripts/package-imports.ts). A package whose dist/ is what its
 * sources, manifest and lockfile make is left as it is (scripts/build-stamp.ts; `--force` builds it
 * anyway): the test files that install a package each run this build, a tsc of the engine's types.
 */
const root = fileURLToPath(new URL("..", import.meta.url));

export interface PackageEntry {
  /** The output's name: dist/<out>.js. */
  out: string;
  /** The source, from the repo's root. */
  source: string;
  /** Whether the entry's declarations are written (what a user imports; not a bin). */
  types: boolean;
  /**
   * Imported by a user's project without declarations: the SST component, whose source is typed by
   * SST's own platform (globals a project's sst.config.ts has, which the package's tsc doesn't).
   */
  untypedExport?: boolean;
}

export interface PackageSpec {
  /** From the repo's root. */
  dir: string;
  entries: readonly PackageEntry[];
  /** esbuild's target: the oldest Node the manifest's `engines` allows. */
  target: string;
  /** Files copied under dist/, by the folder they go to. */
  assets?: () => Record<string, string[]>;
  /** Files built into dist/, by their path there, and the sources they were built from (for the stamp). */
  generated?: () => Promise<{ files: Record<string, Uint8Array>; inputs: string[] }>;
}

export const packageSpecs = {
  /** `@skyforge/client` (packages/client/README.md): the producer client for other services. */
  client: {
    dir: "packages/client",
    target: "node20",
    entries: [
      { out: "index", source: "client/index.ts", types: true },
      { out: "invoke", source: "client/invoke.ts", types: true },
      { out: "realtime", source: "client/realtime.ts", types: true },
    ],
  },
  /** `skyforge` (packages/skyforge/README.md): the engine, as a project installs it. */
  skyforge: {
    dir: "packages/skyforge",
    target: "node22",
    entries: [
      { out: "index", source: "packages/skyforge/src/index.ts", types: true },
      { out: "client", source: "client/index.ts", types: true },
      { out: "bin", source: "packages/skyforge/src/bin.ts", types: false },
      { out: "sst", source: "infra/skyforge.ts", types: false, untypedExport: true },
      { out: "lambda", source: "functions/handlers.ts", types: true },
      { out: "dev", source: "local/dev-command.ts", types: false },
      { out: "pool", source: "functions/pool/dev-main.ts", types: false },
      { out: "check-deploy", source: "scripts/deploy/check-deploy-command.ts", types: false },
      // Its own file: the offline proof's program imports the mocks by path (scripts/deploy/sst-program.ts).
      { out: "pulumi-mocks", source: "scripts/deploy/pulumi-mocks.ts", types: false },
    ],
    // The web console, served by `skyforge console` (console/assets.ts finds it in dist/console/).
    assets: () => ({ console: consoleSourceFiles() }),
    // The console page's `@skyforge/client/realtime`, prebuilt for the browser (console/realtime-bundle.ts).
    generated: async () => {
      const { contents, inputs } = await bundleRealtimeClient(join(root, "client", "realtime.ts"));
      return { files: { [`console/${REALTIME_MODULE}`]: contents }, inputs };
    },
  },
} as const satisfies Record<string, PackageSpec>;

export type PackageName = keyof typeof packageSpecs;

export const packageDir = (name: PackageName): string => join(root, packageSpecs[name].dir);

async function readManifest(dir: string): Promise<PackageManifest> {
  return JSON.parse(await readFile(join(dir, "package.json"), "utf8")) as PackageManifest;
}

/** The repo's package.json (cli/program.ts prints its version) is, in a package, the package's own. */
function ownManifest(dir: string): Plugin {
  return {
    name: "own-manifest",
    setup(b) {
      b.onResolve({ filter: /package\.json$/ }, (args) =>
        resolve(args.resolveDir, args.path) === join(root, "package.json")
          ? { path: join(dir, "package.json") }
          : undefined,
      );
    },
  };
}

/** The JavaScript of a package's entries into `outdir` (its dist/ unless told); returns the sources it holds. */
export async function bundlePackage(
  name: PackageName,
  outdir = join(packageDir(name), "dist"),
): Promise<string[]> {
  const spec: PackageSpec = packageSpecs[name];
  const result = await build({
    absWorkingDir: root,
    entryPoints: Object.fromEntries(spec.entries.map((e) => [e.out, e.source])),
    outdir,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: spec.target,
    // Every package stays an import, resolved from the installing project: the manifest declares it.
    packages: "external",
    plugins: [ownManifest(packageDir(name))],
    metafile: true,
    logLevel: "warning",
  });
  return Object.keys(result.metafile.inputs);
}

/** tsc's declarations of the entries that have types, under dist/types/ by their path in the repo. */
async function writeDeclarations(spec: PackageSpec, dist: string): Promise<void> {
  const config = join(dist, "tsconfig.types.json");
  await writeFile(
    config,
    JSON.stringify({
      extends: join(root, "tsconfig.json"),
      compilerOptions: {
        noEmit: false,
        declaration: true,
        emitDeclarationOnly: true,
        rewriteRelativeImportExtensions: true,
        rootDir: root,
        outDir: join(dist, "types"),
      },
      include: [],
      files: spec.entries.filter((e) => e.types).map((e) => join(root, e.source)),
    }),
  );
  const tsc = spawnSync(
    process.execPath,
    [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", config],
    {
      cwd: root,
      encoding: "utf8",
    },
  );
  await rm(config);
  if (tsc.status !== 0) throw new Error(`tsc (declarations) failed:\n${tsc.stdout}${tsc.stderr}`);
  const entries = await readdir(join(dist, "types"), { withFileTypes: true, recursive: true });
  for (const e of entries.filter((f) => f.isFile() && f.name.endsWith(".d.ts"))) {
    const file = join(e.parentPath, e.name);
    const text = await readFile(file, "utf8");
    await writeFile(file, text.replace(/((?:from\s+|import\()"\.{1,2}\/[^"]*)\.ts"/g, '$1.js"'));
  }
}

/** What every package's build reads besides its entries' sources: a change to any builds again. */
const BUILD_FILES = [
  "package.json",
  "package-lock.json",
  "tsconfig.json",
  "scripts/build-packages.ts",
  "scripts/build-stamp.ts",
  "scripts/file-hash.ts",
  "scripts/package-imports.ts",
].map((file) => join(root, file));

/** The sources tsc declared: each dist/types/<path>.d.ts is <path>.ts of the repo. */
async function declaredSources(dist: string): Promise<string[]> {
  const entries = await readdir(join(dist, "types"), { recursive: true }).catch(() => []);
  return entries
    .filter((file) => String(file).endsWith(".d.ts"))
    .map((file) => join(root, String(file).replace(/\.d\.ts$/, ".ts")));
}

export interface BuiltPackage {
  dist: string;
  /** The dist/ was already what the sources make: nothing was built. */
  upToDate: boolean;
}

/** Builds one package into its dist/: JavaScript, declarations, assets; then checks its imports. */
export async function buildPackage(name: PackageName, { force = false } = {}): Promise<BuiltPackage> {
  const spec: PackageSpec = packageSpecs[name];
  const dir = packageDir(name);
  const dist = join(dir, "dist");
  const stamp = join(root, ".cache", "skyforge-build", `${name}.json`);
  if (!force && (await isUpToDate(stamp, dist))) return { dist, upToDate: true };
  await rm(dist, { recursive: true, force: true });
  const bundled = await bundlePackage(name, dist);
  await writeDeclarations(spec, dist);
  const assets = Object.entries(spec.assets?.() ?? {});
  for (const [folder, files] of assets) {
    await mkdir(join(dist, folder), { recursive: true });
    for (const file of files) await copyFile(file, join(dist, folder, basename(file)));
  }
  const generated = (await spec.generated?.()) ?? { files: {}, inputs: [] };
  for (const [path, bytes] of Object.entries(generated.files)) {
    await mkdir(join(dist, path, ".."), { recursive: true });
    await writeFile(join(dist, path), bytes);
  }
  const undeclared = await undeclaredImports(dist, await readManifest(dir));
  if (undeclared.length > 0) {
    const lines = undeclared.map((u) => `  ${u.packageName} (${u.file}: "${u.specifier}")`);
    throw new Error(`${spec.dir}/package.json doesn't declare what its build loads:\n${lines.join("\n")}`);
  }
  await writeStamp(
    stamp,
    [
      ...BUILD_FILES,
      join(dir, "package.json"),
      ...bundled.map((input) => resolve(root, input)),
      ...(await declaredSources(dist)),
      ...assets.flatMap(([, files]) => files),
      ...generated.inputs,
    ],
    dist,
  );
  return { dist, upToDate: false };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const force = process.argv.includes("--force");
  const asked = process.argv.slice(2).filter((arg) => arg !== "--force");
  const unknown = asked.filter((n) => !(n in packageSpecs));
  if (unknown.length > 0) {
    console.error(`no package ${unknown.join(", ")}; the packages: ${Object.keys(packageSpecs).join(", ")}`);
    process.exit(2);
  }
  for (const name of (asked.length > 0 ? asked : Object.keys(packageSpecs)) as PackageName[]) {
    const { dist, upToDate } = await buildPackage(name, { force });
    console.log(upToDate ? `up to date ${dist}` : `built ${dist}`);
  }
}
