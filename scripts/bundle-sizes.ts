import { fileURLToPath } from "node:url";
import { build } from "esbuild";

/** The Lambda entry points, bundled the way they would be deployed. */
export const functionEntries = {
  enqueue: "functions/enqueue.ts",
  api: "functions/api.ts",
  worker: "functions/worker.ts",
} as const;

export type BundleBytes = Record<keyof typeof functionEntries, number>;

/**
 * Bundles each function with esbuild (bundle, minify, ESM, platform node, target node24) in memory
 * and returns its size in bytes. Everything is bundled, the AWS SDK included, as cold start pays for
 * all of it. The banner gives CommonJS dependencies the `require` an ESM bundle lacks.
 */
export async function bundleSizes(
  root = fileURLToPath(new URL("..", import.meta.url)),
): Promise<BundleBytes> {
  const sizes = {} as BundleBytes;
  for (const [name, entry] of Object.entries(functionEntries) as [keyof BundleBytes, string][]) {
    const out = await build({
      absWorkingDir: root,
      entryPoints: [entry],
      bundle: true,
      minify: true,
      format: "esm",
      platform: "node",
      target: "node24",
      write: false,
      logLevel: "silent",
      banner: { js: "import{createRequire as __cr}from'node:module';const require=__cr(import.meta.url);" },
    });
    sizes[name] = out.outputFiles.reduce((sum, f) => sum + f.contents.byteLength, 0);
  }
  return sizes;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const sizes = await bundleSizes();
  for (const [name, bytes] of Object.entries(sizes)) console.log(`${name.padEnd(8)} ${bytes} bytes`);
}
