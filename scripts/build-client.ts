import { spawnSync } from "node:child_process";
import { readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

/**
 * `npm run build:client`: the producer client as the package in packages/client (`@skyforge/client`,
 * its README says what it holds). JavaScript: client/index.ts and client/invoke.ts bundled by
 * esbuild into ESM with the lib/ model they use (client-is-light in .dependency-cruiser.cjs), every
 * package the manifest names (dependencies and peers) left as an import. Types: tsc's declarations
 * of the same entries, their `.ts` import paths rewritten to `.js` as in any published package's
 * declarations (tsc keeps them as written). The output, packages/client/dist, is git-ignored.
 */
const root = fileURLToPath(new URL("..", import.meta.url));
export const clientPackageDir = join(root, "packages", "client");

export async function buildClient(): Promise<void> {
  const dist = join(clientPackageDir, "dist");
  await rm(dist, { recursive: true, force: true });
  const manifest = JSON.parse(await readFile(join(clientPackageDir, "package.json"), "utf8")) as {
    dependencies?: Record<string, string>;
    peerDependencies?: Record<string, string>;
  };
  const external = Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies });
  await build({
    absWorkingDir: root,
    entryPoints: ["client/index.ts", "client/invoke.ts"],
    outdir: dist,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    external,
    logLevel: "warning",
  });
  const tsc = spawnSync(
    process.execPath,
    [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", clientPackageDir],
    { cwd: root, encoding: "utf8" },
  );
  if (tsc.status !== 0) throw new Error(`tsc (declarations) failed:\n${tsc.stdout}${tsc.stderr}`);
  for (const file of await declarationFiles(join(dist, "types"))) {
    const text = await readFile(file, "utf8");
    await writeFile(file, text.replace(/(from\s+"\.{1,2}\/[^"]*)\.ts"/g, '$1.js"'));
  }
}

async function declarationFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile() && e.name.endsWith(".d.ts")).map((e) => join(e.parentPath, e.name));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await buildClient();
  console.log(`built ${join(clientPackageDir, "dist")}`);
}
