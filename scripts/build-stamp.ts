import { mkdir, readdir, readFile, rename, writeFile } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import { fileSha256 } from "./file-hash.ts";

/**
 * Whether a build's output is still what its inputs make: a stamp (git-ignored, beside the output,
 * never in it) records the SHA-256 of every file the build read and of every file it wrote. The
 * build is up to date when each input still has its recorded content and the output folder holds
 * exactly the recorded files with their recorded content; anything else (an edited source, a new
 * dependency in the lockfile, a file removed from or added to the output) builds again. Content,
 * not mtimes: a fresh clone, a checkout or a `touch` changes no answer.
 */

/** Bumped when a stamp's meaning changes, so an old stamp is never trusted. */
const STAMP_FORMAT = 1;

interface Stamp {
  format: number;
  /** Absolute path → SHA-256 of each file the build read. */
  inputs: Record<string, string>;
  /** Path under the output folder → SHA-256 of each file the build wrote. */
  outputs: Record<string, string>;
}

async function filesUnder(dir: string): Promise<string[]> {
  try {
    const entries = await readdir(dir, { withFileTypes: true, recursive: true });
    return entries.filter((e) => e.isFile()).map((e) => relative(dir, join(e.parentPath, e.name)));
  } catch {
    return [];
  }
}

async function hashes(paths: readonly string[], base = ""): Promise<Record<string, string> | undefined> {
  const out: Record<string, string> = {};
  for (const path of paths) {
    const hash = await fileSha256(join(base, path));
    if (hash === undefined) return undefined;
    out[path] = hash;
  }
  return out;
}

const same = (a: Record<string, string>, b: Record<string, string>) =>
  Object.keys(a).length === Object.keys(b).length && Object.entries(a).every(([k, v]) => b[k] === v);

/** Whether `outDir` is what the build that wrote `stampFile` made, from inputs that haven't changed. */
export async function isUpToDate(stampFile: string, outDir: string): Promise<boolean> {
  let stamp: Stamp;
  try {
    stamp = JSON.parse(await readFile(stampFile, "utf8")) as Stamp;
  } catch {
    return false;
  }
  if (stamp.format !== STAMP_FORMAT) return false;
  const inputs = await hashes(Object.keys(stamp.inputs));
  if (!inputs || !same(inputs, stamp.inputs)) return false;
  const outputs = await hashes(await filesUnder(outDir), outDir);
  return outputs !== undefined && same(outputs, stamp.outputs);
}

/** Records a finished build: what it read (absolute paths) and everything now in `outDir`. */
export async function writeStamp(
  stampFile: string,
  inputs: readonly string[],
  outDir: string,
): Promise<void> {
  const read = await hashes([...new Set(inputs)].sort());
  const written = await hashes(await filesUnder(outDir), outDir);
  // An input gone while the build ran: no stamp, so the next build runs again.
  if (!read || !written) return;
  const stamp: Stamp = { format: STAMP_FORMAT, inputs: read, outputs: written };
  await mkdir(dirname(stampFile), { recursive: true });
  const partial = `${stampFile}.${process.pid}`;
  await writeFile(partial, JSON.stringify(stamp));
  await rename(partial, stampFile);
}
