import { createHash, randomUUID } from "node:crypto";
import { copyFile, mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";
import { version as esbuildVersion } from "esbuild";
import { fileSha256 } from "../file-hash.ts";

/**
 * Function bundles kept by what made them, for the offline deploy proof: `check:deploy` bundles
 * every function of every stage it runs, and a test file runs it several times over one project
 * with only its infra edited. An entry is keyed by the build's options (its entry point, esbuild's
 * settings and version) and holds up to KEPT_CONTENTS bundles of that build, each with the SHA-256
 * of every file esbuild read for it; a build whose inputs all hash as one of them recorded gets
 * that bundle, anything else builds again and is kept beside them (the least recently served
 * dropped). Several, not one: the deploy proof's test files edit a file of lib/ in their copies of
 * the project and put it back, beside each other, and with one bundle a key each edit, each
 * restore and every other file's next run built the whole set of functions again. Only bundles
 * without a source map are kept: a map's paths depend on where the bundle is written.
 *
 * The cache lives under the project's node_modules/.cache/ (where build tools keep theirs), so a
 * copy of a project that links its node_modules shares it: paths are kept relative to the project.
 */

/** Bumped when an entry's layout or meaning changes. */
const ENTRY_FORMAT = 2;

/** The bundles kept per key: the project as it stands and a few edits of it running beside it. */
export const KEPT_CONTENTS = 6;

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

/**
 * One kept content of a key: a folder named by the hash of what was read, holding the bundle and
 * its meta, moved in whole once written and never changed after (so a reader never pairs one
 * build's meta with another's bundle).
 */
interface EntryMeta {
  format: number;
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

const BUNDLE_FILE = "bundle.mjs";
const META_FILE = "meta.json";

/** A file's SHA-256, or "-" when there is no such file. */
const sha256 = async (file: string): Promise<string> => (await fileSha256(file)) ?? "-";

/** Whether every file read still hashes as recorded (`hashOf` hashes each file once per lookup). */
async function unchanged(read: Record<string, string>, hashOf: (path: string) => Promise<string>) {
  for (const [path, hash] of Object.entries(read)) {
    if ((await hashOf(path)) !== hash) return false;
  }
  return true;
}

interface KeptContent {
  dir: string;
  meta: EntryMeta;
  /** When it was kept or last served (its meta's mtime). */
  usedAt: number;
}

/** A key's kept contents, the most recently used first; one half-written or unreadable is skipped. */
async function keptContents(entry: string): Promise<KeptContent[]> {
  const names = await readdir(entry).catch(() => [] as string[]);
  const kept = await Promise.all(
    // A name with a dot is a content still being written (keep()).
    names
      .filter((name) => !name.includes("."))
      .map(async (name): Promise<KeptContent | undefined> => {
        const dir = join(entry, name);
        try {
          const meta = JSON.parse(await readFile(join(dir, META_FILE), "utf8")) as EntryMeta;
          if (meta.format !== ENTRY_FORMAT) return undefined;
          return { dir, meta, usedAt: (await stat(join(dir, META_FILE))).mtimeMs };
        } catch {
          return undefined;
        }
      }),
  );
  return kept.filter((k) => k !== undefined).sort((a, b) => b.usedAt - a.usedAt);
}

/** The kept bundle whose every file read is unchanged, written to `outfile`; undefined when none is. */
async function served(root: string, entry: string, outfile: string): Promise<Bundle | undefined> {
  const hashes = new Map<string, Promise<string>>();
  const hashOf = (path: string) => {
    let hash = hashes.get(path);
    if (!hash) {
      hash = sha256(resolve(root, path));
      hashes.set(path, hash);
    }
    return hash;
  };
  for (const { dir, meta } of await keptContents(entry)) {
    if (!(await unchanged(meta.read, hashOf))) continue;
    try {
      await mkdir(dirname(outfile), { recursive: true });
      await copyFile(join(dir, BUNDLE_FILE), outfile);
    } catch {
      // Dropped by a build beside this one since it was listed: another may still serve.
      continue;
    }
    const now = new Date();
    await utimes(join(dir, META_FILE), now, now).catch(() => undefined);
    return { bytes: meta.bytes, inputs: meta.inputs.map((path) => resolve(root, path)), cached: true };
  }
  return undefined;
}

/**
 * The bundle `key` names, written to `outfile`: a kept one if its inputs are unchanged, else
 * `build()`'s, then kept. A cache that can't be read or written only costs the build.
 */
export async function cachedBundle(
  root: string,
  key: unknown,
  outfile: string,
  build: () => Promise<BuiltBundle>,
): Promise<Bundle> {
  const id = createHash("sha256")
    .update(JSON.stringify({ format: ENTRY_FORMAT, esbuildVersion, key }))
    .digest("hex");
  const entry = join(bundleCacheDir(root), id);
  const kept = await served(root, entry, outfile).catch(() => undefined);
  if (kept) return kept;
  const { bytes, inputs, read } = await build();
  await keep(root, entry, outfile, { bytes, inputs, read }).catch(() => undefined);
  return { bytes, inputs, cached: false };
}

async function keep(root: string, entry: string, outfile: string, built: BuiltBundle) {
  const read: Record<string, string> = {};
  for (const path of [...built.read, ...PROJECT_FILES.map((file) => join(root, file))]) {
    const hash = await sha256(path);
    // A file read and gone already: nothing to key the bundle by.
    if (hash === "-" && built.read.includes(path)) return;
    read[relative(root, path)] = hash;
  }
  // Named by what was read: two builds of one content beside each other keep it once.
  const content = createHash("sha256")
    .update(JSON.stringify(Object.entries(read).sort()))
    .digest("hex")
    .slice(0, 32);
  const target = join(entry, content);
  // Written aside, then moved in whole: a file running beside this one never reads half a content.
  const partial = `${target}.${randomUUID()}`;
  await mkdir(partial, { recursive: true });
  try {
    await copyFile(outfile, join(partial, BUNDLE_FILE));
    const inputs = built.inputs.map((path) => relative(root, path));
    const meta: EntryMeta = { format: ENTRY_FORMAT, bytes: built.bytes, inputs, read };
    await writeFile(join(partial, META_FILE), JSON.stringify(meta));
    // Already there when a build beside this one kept the same content first.
    await rename(partial, target).catch(() => undefined);
  } finally {
    await rm(partial, { recursive: true, force: true });
  }
  for (const { dir } of (await keptContents(entry)).slice(KEPT_CONTENTS)) {
    await rm(dir, { recursive: true, force: true });
  }
}
