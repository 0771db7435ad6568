import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { build, type Plugin } from "esbuild";
import { buildSettings, defaultRoot, deployedSdkOption } from "./bundle-sizes.ts";
import { functionEnv, mediansByName, type NamedMedian } from "./cold-start.ts";
import { groupOf } from "./cold-start-profile.ts";
import { sstNodeBuildOptions, writeRepoEntries } from "./deploy/lambda-build.ts";

/**
 * A function's import, module by module (issue 44): the bundle built as deployed, with one line
 * put at the top of every bundled file that notes the time when that file's top-level code starts.
 * A bundle evaluates its modules one after another, so the time from one note to the next is that
 * module's own evaluation, the library calls it makes at top level included (a kind's zod schema
 * counts for the kind's file, zod's own classes for zod's files). Before the first note: Node's
 * start, the external AWS SDK's imports (ESM evaluates them first) and the bundle's compile; after
 * the entry's end: nothing but exit. The notes cost a little themselves (one push each, ~900 files).
 *
 * `npx tsx scripts/cold-start-modules.ts [--function worker] [--runs 9] [--files]`
 */

/** Records the process's start, before the bundle loads, and prints the notes at exit. */
const PRELUDE = `data:text/javascript,${encodeURIComponent(
  'globalThis.__sfNotes = [["(start)", performance.now()]]; process.on("exit", () => { globalThis.__sfNotes.push(["(exit)", performance.now()]); process.stdout.write("\\n" + JSON.stringify(globalThis.__sfNotes) + "\\n"); });',
)}`;

const note = (label: string) =>
  `globalThis.__sfNotes?.push([${JSON.stringify(label)}, performance.now()]);\n`;

function notingPlugin(root: string, entry: string): Plugin {
  return {
    name: "note-module-starts",
    setup(b) {
      b.onLoad({ filter: /\.(ts|mts|js|mjs|cjs)$/ }, (args) => {
        const isEntry = args.path === entry;
        // The entry's own top level runs after its imports: it builds the handler (engine, clients, logger).
        const label = isEntry ? "(the entry: the handler built)" : relative(root, args.path);
        const source = readFileSync(args.path, "utf8");
        const end = isEntry ? `\n${note("(exit)")}` : "";
        const loader = /\.m?ts$/.test(args.path) ? "ts" : "js";
        return { contents: `${note(label)}${source}${end}`, loader };
      });
    },
  };
}

/** Each note's time to the next, per label; medians over the runs. */
export async function moduleTimes(
  fn: string,
  { runs = 9, root = defaultRoot, node = process.execPath, byFile = false } = {},
): Promise<NamedMedian[]> {
  const dir = join(root, ".cache", `cold-start-modules-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  try {
    const handler = (writeRepoEntries(root) as Record<string, string>)[fn];
    if (!handler) throw new Error(`no function named ${fn}`);
    const entry = join(root, handler.replace(/\.handler$/, ".ts"));
    const outfile = join(dir, `${fn}.mjs`);
    const options = sstNodeBuildOptions(entry, outfile, buildSettings(deployedSdkOption));
    await build({ absWorkingDir: root, ...options, plugins: [notingPlugin(root, entry)] });
    writeFileSync(join(dir, "package.json"), "{}");
    const perRun: Map<string, number>[] = [];
    for (let run = 0; run <= runs; run++) {
      const started = spawnSync(node, ["--import", PRELUDE, outfile], {
        env: { PATH: process.env.PATH ?? "", ...functionEnv() },
        encoding: "utf8",
      });
      if (started.status !== 0) throw new Error(`${fn} exited with ${started.status}: ${started.stderr}`);
      if (run === 0) continue; // fills the file cache, as the bench's unmeasured round does
      const notes = JSON.parse(started.stdout.trim().split("\n").pop() as string) as [string, number][];
      const sums = new Map<string, number>();
      notes.slice(0, -1).forEach(([label, at], i) => {
        const next = (notes[i + 1] as [string, number])[1];
        const group =
          label === "(start)"
            ? "(Node start, SDK imports, bundle compile)"
            : label.startsWith("(") || byFile
              ? label
              : groupOf(label);
        sums.set(group, (sums.get(group) ?? 0) + (next - at));
      });
      perRun.push(sums);
    }
    return mediansByName(perRun);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values } = parseArgs({
    options: {
      function: { type: "string", default: "worker" },
      runs: { type: "string", default: "9" },
      files: { type: "boolean", default: false },
    },
  });
  const times = await moduleTimes(values.function, { runs: Number(values.runs), byFile: values.files });
  console.log(`${values.function}: module evaluation, wall ms, medians of ${values.runs} fresh processes`);
  for (const t of times.filter((t) => t.ms >= 0.1)) console.log(`${t.ms.toFixed(1).padStart(7)}  ${t.name}`);
  const total = times.reduce((sum, t) => sum + t.ms, 0);
  console.log(`${total.toFixed(1).padStart(7)}  sum of the medians`);
}
