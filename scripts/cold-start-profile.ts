import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { SourceMap } from "node:module";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { build } from "esbuild";
import { buildSettings, defaultRoot, deployedSdkOption } from "./bundle-sizes.ts";
import { functionEnv, mediansByName, type NamedMedian } from "./cold-start.ts";
import { sstNodeBuildOptions, writeRepoEntries } from "./deploy/lambda-build.ts";

/**
 * Where a function's import spends its CPU (issue 44, docs/guide/performance.md "Cold start"): the
 * bundle built as deployed plus a sourcemap, started N times under `node --cpu-prof`, each sample's
 * running function (self time) mapped back through the sourcemap to the module it came from, and
 * summed by group: an npm package, skyforge's own folder (lib/job, lib/store…), the external AWS
 * SDK by package, and Node's own start. Samples, not a trace: a module's share is its code's
 * running time, and a few ms either way is the profiler's resolution.
 *
 * `npx tsx scripts/cold-start-profile.ts [--function worker] [--runs 9] [--files] [--callers zod]`
 */

interface CpuProfile {
  nodes: {
    id: number;
    callFrame: { url: string; lineNumber: number; columnNumber: number; functionName: string };
    children?: number[];
  }[];
  samples: number[];
  timeDeltas: number[];
}

/** The group a source path belongs to: a package, a folder of skyforge's own, or the runtime. */
export function groupOf(source: string, byFile = false): string {
  if (byFile) return source.replace(/^.*node_modules\//, "");
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(source)?.[1];
  if (pkg) return pkg.startsWith("@aws-sdk/") || pkg.startsWith("@smithy/") ? `sdk ${pkg}` : pkg;
  const own = /(?:^|\/)(lib\/[^/]+(?=\/)|lib|functions|app|packages\/skyforge)\//.exec(source)?.[1];
  if (own) return own;
  if (source === "" || source.startsWith("node:")) return "(node)";
  return source;
}

/**
 * Milliseconds per group in one profile, each sample mapped through the bundle's sourcemap. A sample
 * in Node's own code (its module loader compiling and linking a file, a builtin) counts for the
 * nearest caller that is the bundle's or a package's code, so loading the SDK counts for the SDK;
 * only what no module's code called stays "(node)".
 */
function groupsOf(
  profile: CpuProfile,
  bundleUrl: string,
  map: SourceMap,
  byFile: boolean,
  callersOf: string | undefined,
): Map<string, number> {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);
  const groupOfFrame = (frame: CpuProfile["nodes"][number]["callFrame"]): string | undefined => {
    if (frame.url === bundleUrl) {
      const entry = map.findEntry(frame.lineNumber, frame.columnNumber);
      return "originalSource" in entry ? groupOf(entry.originalSource, byFile) : "(bundle, unmapped)";
    }
    if (frame.url.includes("/node_modules/")) return groupOf(frame.url, byFile);
    return undefined;
  };
  const sums = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    const own = byId.get(id)?.callFrame.functionName ?? "";
    // (program), (garbage collector), (idle): the profiler's own names, kept apart.
    let group = own.startsWith("(") ? own : undefined;
    let at: number | undefined = id;
    for (; group === undefined && at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)?.callFrame;
      if (frame) group = groupOfFrame(frame);
    }
    group ??= "(node)";
    // A package's time told apart by the first caller outside it (which module built zod's schemas).
    if (callersOf !== undefined && group.includes(callersOf)) {
      let caller: string | undefined;
      for (; caller === undefined && at !== undefined; at = parent.get(at)) {
        const frame = byId.get(at)?.callFrame;
        const outer = frame && groupOfFrame(frame);
        if (outer && !outer.includes(callersOf)) caller = outer;
      }
      group = `${callersOf} from ${caller ?? "(its own init)"}`;
    }
    sums.set(group, (sums.get(group) ?? 0) + ms);
  });
  return sums;
}

export async function profileImport(
  fn: string,
  {
    runs = 9,
    root = defaultRoot,
    node = process.execPath,
    byFile = false,
    callersOf = undefined as string | undefined,
  } = {},
): Promise<NamedMedian[]> {
  const dir = join(root, ".cache", `cold-start-profile-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  try {
    const entries = writeRepoEntries(root) as Record<string, string>;
    const handler = entries[fn];
    if (!handler) throw new Error(`no function named ${fn}`);
    const entry = join(root, handler.replace(/\.handler$/, ".ts"));
    const outfile = join(dir, `${fn}.mjs`);
    const settings = { ...buildSettings(deployedSdkOption), sourcemap: true };
    await build({ absWorkingDir: root, ...sstNodeBuildOptions(entry, outfile, settings) });
    const map = new SourceMap(JSON.parse(readFileSync(`${outfile}.map`, "utf8")));
    const bundleUrl = `file://${outfile}`;
    const perRun: Map<string, number>[] = [];
    for (let run = 0; run <= runs; run++) {
      const profDir = join(dir, `run-${run}`);
      const started = spawnSync(
        node,
        ["--cpu-prof", "--cpu-prof-interval", "100", "--cpu-prof-dir", profDir, outfile],
        { env: { PATH: process.env.PATH ?? "", ...functionEnv() }, stdio: ["ignore", "ignore", "pipe"] },
      );
      if (started.status !== 0) throw new Error(`${fn} exited with ${started.status}: ${started.stderr}`);
      // The first run fills the file cache, as the bench's unmeasured round does.
      if (run === 0) continue;
      const [file] = readdirSync(profDir);
      const profile = JSON.parse(readFileSync(join(profDir, file as string), "utf8")) as CpuProfile;
      perRun.push(groupsOf(profile, bundleUrl, map, byFile, callersOf));
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
      // Each source file apart instead of by package or folder.
      files: { type: "boolean", default: false },
      // A package (zod) whose time is told apart by the module that called into it.
      callers: { type: "string" },
    },
  });
  const groups = await profileImport(values.function, {
    runs: Number(values.runs),
    byFile: values.files,
    callersOf: values.callers,
  });
  const total = groups.reduce((sum, g) => sum + g.ms, 0);
  console.log(
    `${values.function}: CPU profile of its import, medians of ${values.runs} runs (ms, self time)`,
  );
  for (const g of groups.filter((g) => g.ms >= 0.2))
    console.log(`${g.ms.toFixed(1).padStart(7)}  ${relative(defaultRoot, g.name) || g.name}`);
  console.log(`${total.toFixed(1).padStart(7)}  sum of the medians`);
}
