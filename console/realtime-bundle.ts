import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";

/**
 * `@skyforge/client/realtime` as the console's page loads it (its import map names this URL): the
 * client's own code (client/realtime.ts, with MQTT.js's browser build and zod) bundled by esbuild
 * into one ES module for the browser, never a copy of it. The `skyforge` package holds it prebuilt
 * (scripts/build-packages.ts writes dist/console/realtime.mjs); in the repo it is bundled on the
 * first request and kept for the process's life.
 */
export const REALTIME_MODULE = "realtime.mjs";

let built: Promise<Uint8Array> | undefined;

/** The module's bytes: the package's prebuilt file beside the console's, else a bundle of the source. */
export function consoleRealtimeModule(consoleDir: string): Promise<Uint8Array> {
  const prebuilt = join(consoleDir, REALTIME_MODULE);
  if (existsSync(prebuilt)) return readFile(prebuilt);
  built ??= bundleRealtimeClient(join(consoleDir, "..", "client", "realtime.ts")).then(
    (bundle) => bundle.contents,
    (err: unknown) => {
      built = undefined; // the next request tries again (a source mid-edit, say)
      throw err;
    },
  );
  return built;
}

/**
 * esbuild's one ES module of the realtime client for a browser: what the page imports, and the
 * repo's files it was made from (absolute paths: a package build's stamp hashes them).
 */
export async function bundleRealtimeClient(
  source: string,
): Promise<{ contents: Uint8Array; inputs: string[] }> {
  const { build } = await import("esbuild");
  const out = await build({
    entryPoints: [source],
    bundle: true,
    platform: "browser",
    format: "esm",
    target: "es2022",
    minify: true,
    write: false,
    metafile: true,
    absWorkingDir: dirname(source),
    logLevel: "silent",
  });
  const file = out.outputFiles[0];
  if (!file) throw new Error("esbuild wrote no realtime module");
  // The packages' files are named by the lockfile; the repo's own are what may change.
  const inputs = Object.keys(out.metafile.inputs)
    .filter((input) => !input.includes("node_modules/"))
    .map((input) => resolve(dirname(source), input));
  return { contents: file.contents, inputs };
}
