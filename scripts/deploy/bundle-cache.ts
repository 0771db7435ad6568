import { createHash, randomUUID } from "node:crypto";
import { copyFile, mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";
import { version as esbuildVersion } from "esbuild";
import { fileSha256 } from "../file-hash.ts";

/**
 * Function bundles kept by what made them, for the offline deploy proof: `check:deploy` bundles
 * every function of every stage it runs, and a test file runs it several times over one project
 * with only its infra edited. An entry is keyed by the build's options (its entry point, esbuild's
 * settings and version) and holds the bundle with the SHA-256 of every file esbuild read for it; a
 * build whose inputs all still hash the same gets the kept bundle, anything else builds again and
 * replaces the entry. Only bundles without a source map are kept: a map's paths depend on where
 * the bundle is written.
 *
 * The cache lives under the project's node_modules/.cache/ (where build tools keep theirs), so a
 * copy of a project that links its node_modules shares it: paths are kept relative to the project.
 */

/** Bumped when an entry's layout or meaning changes. */
const ENTRY_FORMAT = 1;

/** What a build made: its size, the files in it, and every file esbuild read for it. */
export interface BuiltBundle {
  bytes: number;
  /** The files bundled in, as absolute paths. */
  inputs: string[];
  /** Every file esbuild read (those tree-shaken out too), as absolute paths. */
  read: string[];
}

/** Read by esbuild without being listed as inputs (resolution, tsconfig), or naming what packages are. */
const PROJECT_FILES = ["package.json", "package-lock.json", "tsconfig.json"];

interface EntryMeta {
  format: number;
  /** The bundle's file in the entry: named per write, so a reader never pairs one write's meta with another's bundle. */
  bundle: string;
  bytes: number;
  /** The files bundled in, relative to the project. */
  inputs: string[];
  /** Path relative to the project → SHA-256 of each file read for the bundle ("-": absent). */
  read: Record<string, string>;
}

export interface Bundle {
  bytes: number;
  /** The files bundled in, as absolute paths. */
  inputs: string[];
  /** Served from the cache: esbuild didn't run. */
  cached: boolean;
}

export const bundleCacheDir = (root: string): string =>
  join(root, "node_modules", ".cache", "skyforge-bundles");

/**
 * Each file's hash, read once for one deploy program's run: its functions share most of their ~450
 * files (lib/, the packages' entries), which were read and hashed again for each function, ~4 500
 * reads a stage. One run's builds never edit a file, so a file hashed for one of them is as good
 * for the next; a new run starts a new memo and reads every file again.
 */
export type FileHashes = Map<string, Promise<string>>;

/** A file's SHA-256, or "-" when there is no such file. */
function sha256(file: string, hashes: FileHashes): Promise<string> {
  let hash = hashes.get(file);
  if (!hash) {
    hash = fileSha256(file).then((h) => h ?? "-");
    hashes.set(file, hash);
  }
  return hash;
}

/** Whether every file read still hashes as recorded. */
async function unchanged(root: string, read: Record<string, string>, hashes: FileHashes): Promise<boolean> {
  for (const [path, hash] of Object.entries(read)) {
    if ((await sha256(resolve(root, path), hashes)) !== hash) return false;
  }
  return true;
}

/**
 * The bundle `key` names, written to `outfile`: the kept one if its inputs are unchanged, else
 * `build()`'s, then kept. A cache that can't be read or written only costs the build. `hashes`: the
 * files already hashed by this deploy program's run (none by default).
 */
export async function cachedBundle(
  root: string,
  key: unknown,
  outfile: string,
  build: () => Promise<BuiltBundle>,
  hashes: FileHashes = new Map(),
): Promise<Bundle> {
  const id = createHash("sha256")
    .update(JSON.stringify({ format: ENTRY_FORMAT, esbuildVersion, key }))
    .digest("hex");
  const entry = join(bundleCacheDir(root), id);
  try {
    const meta = JSON.parse(await readFile(join(entry, "meta.json"), "utf8")) as EntryMeta;
    if (meta.format === ENTRY_FORMAT && (await unchanged(root, meta.read, hashes))) {
      await mkdir(dirname(outfile), { recursive: true });
      await copyFile(join(entry, meta.bundle), outfile);
      const inputs = meta.inputs.map((path) => resolve(root, path));
      return { bytes: meta.bytes, inputs, cached: true };
    }
  } catch {
    // no entry, or an unreadable one: build
  }
  const { bytes, inputs, read } = await build();
  await keep(root, entry, outfile, { bytes, inputs, read }, hashes).catch(() => undefined);
  return { bytes, inputs, cached: false };
}

async function keep(root: string, entry: string, outfile: string, built: BuiltBundle, hashes: FileHashes) {
  const read: Record<string, string> = {};
  for (const path of [...built.read, ...PROJECT_FILES.map((file) => join(root, file))]) {
    const hash = await sha256(path, hashes);
    // A file read and gone already: nothing to key the bundle by.
    if (hash === "-" && built.read.includes(path)) return;
    read[relative(root, path)] = hash;
  }
  // Written aside, then moved in whole: a file running beside this one never reads half an entry.
  const write = randomUUID();
  const partial = `${entry}.${write}`;
  await mkdir(partial, { recursive: true });
  try {
    const bundle = `${write}.mjs`;
    await copyFile(outfile, join(partial, bundle));
    const inputs = built.inputs.map((path) => relative(root, path));
    const meta: EntryMeta = { format: ENTRY_FORMAT, bundle, bytes: built.bytes, inputs, read };
    await writeFile(join(partial, "meta.json"), JSON.stringify(meta));
    await rm(entry, { recursive: true, force: true });
    await rename(partial, entry);
  } finally {
    await rm(partial, { recursive: true, force: true });
  }
}
