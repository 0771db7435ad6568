/**
 * The operator CLI as ES modules, for bin/skyforge.mjs: cli/main.ts and the project's modules it
 * reaches (the client, lib/'s model, the app for `types`) bundled by esbuild, the packages left as
 * imports, and kept in `.cache/skyforge-cli/` (git-ignored): `main.mjs`, and a chunk for each part
 * the CLI imports only when a command needs it (the MCP server, the realtime client, esbuild). Node
 * loads it in a fraction of the time tsx takes to resolve and load the ~150 TypeScript modules one
 * by one through its loader. Split so, a start loads only main.mjs's packages: in one bundle the
 * lazy parts' packages (the MCP SDK, mqtt, esbuild) were static imports of the one file, loaded by
 * every command (`queues ls`: 0.37 → 0.25 CPU-s a start, medians of 9).
 *
 * main.mjs's first line records every file it was built from with its mtime and size, and its
 * chunks; a start whose files all still match, its chunks there, runs it; anything else (an edited
 * kind, a pulled commit, a new esbuild, a chunk gone) builds it again first. A build that can't be
 * made or kept (esbuild missing, a syntax error, a read-only checkout, a file changed while it was
 * read) answers undefined, and the launcher runs the sources through tsx as before, which reports
 * any error in them as it always did.
 *
 * Plain JavaScript, like the launcher: it runs on whatever Node npx found.
 */
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { basename, dirname, join, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/** Bumped when the build's options change, so a bundle built the old way is built again. */
const FORMAT = 2;
/** A chunk's name holds its content's hash, so a chunk on disk never changes under a running CLI. */
const CHUNK_NAMES = "chunk-[hash]";
const HEADER = "// skyforge-cli-bundle ";

/** The bundle's path, fresh for the sources as they are now; undefined when the sources must run through tsx. */
export async function cliBundle(root, require) {
  const file = join(root, ".cache", "skyforge-cli", "main.mjs");
  if (isFresh(file)) return file;
  return (await build(root, require, file)) ? file : undefined;
}

/** Whether the bundle exists, was built this way, and from files that are all as they were. */
function isFresh(file) {
  let text;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return false;
  }
  if (!text.startsWith(HEADER)) return false;
  let header;
  try {
    header = JSON.parse(text.slice(HEADER.length, text.indexOf("\n")));
  } catch {
    return false;
  }
  if (header.format !== FORMAT || typeof header.inputs !== "object" || header.inputs === null) return false;
  if (!Array.isArray(header.chunks) || !header.chunks.every((name) => existsSync(join(dirname(file), name))))
    return false;
  return Object.entries(header.inputs).every(([path, seen]) => {
    try {
      const now = statSync(path);
      return now.mtimeMs === seen[0] && now.size === seen[1];
    } catch {
      return false;
    }
  });
}

async function build(root, require, file) {
  let esbuild;
  try {
    esbuild = require("esbuild");
  } catch {
    return false;
  }
  const startedAt = Date.now();
  let result;
  try {
    result = await esbuild.build({
      absWorkingDir: root,
      entryPoints: ["cli/main.ts"],
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node24",
      // Imported from node_modules at run time, found from .cache/skyforge-cli/ as from the root.
      packages: "external",
      tsconfig: join(root, "tsconfig.json"),
      splitting: true,
      outdir: dirname(file),
      entryNames: "main",
      chunkNames: CHUNK_NAMES,
      outExtension: { ".js": ".mjs" },
      write: false,
      metafile: true,
      logLevel: "silent",
      plugins: [ownLocation],
    });
  } catch {
    return false;
  }
  // What the build read, and what decides how it reads it: the launcher's files and esbuild itself.
  const inputs = [
    ...Object.keys(result.metafile.inputs).map((path) => join(root, path)),
    join(root, "tsconfig.json"),
    fileURLToPath(import.meta.url),
    join(root, "bin", "skyforge.mjs"),
    require.resolve("esbuild/package.json"),
  ];
  const stamps = {};
  for (const path of inputs) {
    let now;
    try {
      now = statSync(path);
    } catch {
      return false;
    }
    // Changed while the build read it: the bundle may hold the old text, so it is not kept.
    if (now.mtimeMs >= startedAt) return false;
    stamps[path] = [now.mtimeMs, now.size];
  }
  const main = result.outputFiles.find((o) => o.path === file);
  if (!main) return false;
  const chunks = result.outputFiles.filter((o) => o !== main).map((o) => basename(o.path));
  const text = `${HEADER}${JSON.stringify({ format: FORMAT, inputs: stamps, chunks })}\n${main.text}`;
  // The chunks first, each written aside and renamed over; then main.mjs, so a CLI starting meanwhile
  // reads the old main.mjs and its chunks (still there) or the new one and its.
  let aside = "";
  try {
    mkdirSync(dirname(file), { recursive: true });
    for (const chunk of result.outputFiles) {
      if (chunk === main) continue;
      aside = `${chunk.path}.${process.pid}.tmp`;
      writeFileSync(aside, chunk.contents);
      renameSync(aside, chunk.path);
    }
    aside = `${file}.${process.pid}.tmp`;
    writeFileSync(aside, text);
    renameSync(aside, file);
  } catch {
    try {
      rmSync(aside, { force: true });
    } catch {
      // never written (no folder to write it in)
    }
    return false;
  }
  pruneChunks(dirname(file), new Set(chunks));
  return true;
}

/** Chunks of earlier builds, once a day old: a CLI started before that has long loaded its own. */
function pruneChunks(dir, kept) {
  const dayAgo = Date.now() - 24 * 60 * 60 * 1000;
  try {
    for (const name of readdirSync(dir)) {
      if (!name.startsWith("chunk-") || kept.has(name)) continue;
      const path = join(dir, name);
      if (statSync(path).mtimeMs < dayAgo) rmSync(path, { force: true });
    }
  } catch {
    // another CLI pruned it first, or the folder can't be listed: they stay, harmless
  }
}

/**
 * `import.meta.url` (and `dirname`, `filename`) in the project's modules keep naming the module's own
 * file, as under tsx, rather than the bundle's: cli/target.ts finds the project's .sst/outputs.json
 * from it, console/assets.ts the console's files.
 */
const ownLocation = {
  name: "skyforge-own-location",
  setup(build) {
    build.onLoad({ filter: /\.[cm]?[jt]s$/ }, (args) => {
      if (args.path.includes(`${sep}node_modules${sep}`)) return undefined;
      const source = readFileSync(args.path, "utf8");
      if (!source.includes("import.meta.")) return undefined;
      const contents = source
        .replaceAll("import.meta.url", JSON.stringify(pathToFileURL(args.path).href))
        .replaceAll("import.meta.dirname", JSON.stringify(dirname(args.path)))
        .replaceAll("import.meta.filename", JSON.stringify(args.path));
      return { contents, loader: /\.[cm]?ts$/.test(args.path) ? "ts" : "js" };
    });
  },
};
