import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build, type Metafile } from "esbuild";
import { nodejsBuild } from "../infra/function-defaults.ts";
import {
  functionName,
  lambdaHandlers,
  sstNodeBuildOptions,
  writeRepoEntries,
} from "./deploy/lambda-build.ts";

/** The size budget (docs/architecture.md §13): every Lambda bundle, minified. */
export const BUNDLE_BUDGET_BYTES = 400 * 1024;

const SDK_PATTERN = "@aws-sdk/*";

/**
 * Where the AWS SDK comes from: "external" leaves it to the nodejs24.x runtime (which ships SDK
 * v3), "bundled" puts it in each bundle.
 */
export type SdkOption = "external" | "bundled";

/** The option infra/function-defaults.ts deploys. */
export const deployedSdkOption: SdkOption = nodejsBuild.esbuild.external.includes(SDK_PATTERN)
  ? "external"
  : "bundled";

/** The deployed build settings, with the SDK either left out of the bundle or put in it. */
export function buildSettings(sdk: SdkOption) {
  const others = nodejsBuild.esbuild.external.filter((pattern) => pattern !== SDK_PATTERN);
  return {
    ...nodejsBuild,
    esbuild: { ...nodejsBuild.esbuild, external: sdk === "external" ? [...others, SDK_PATTERN] : others },
  };
}

export interface FunctionBundle {
  /** "worker", from the handler ".sst/skyforge/Jobs/worker.handler". */
  name: string;
  /** Where the bundle was written (<outDir>/.sst/skyforge/Jobs/<name>.mjs, as SST lays it out). */
  file: string;
  bytes: number;
  /** The bundle's bundled inputs (project paths), and the packages it imports at run time. */
  inputs: string[];
  externals: string[];
  /**
   * The externals it imports statically, so loads at init: a dynamic `import()` of a package
   * (loaded on first use) stays out. What the cold-start baseline imports (scripts/cold-start.ts).
   */
  initExternals: string[];
}

export const defaultRoot = fileURLToPath(new URL("..", import.meta.url));

/**
 * Bundles every Lambda handler with SST's own esbuild settings (scripts/deploy/lambda-build.ts) and
 * the deployed options, the SDK placed as asked. outDir (relative to root, or absolute) must lie
 * inside the project, so the external SDK resolves from node_modules as it does from the runtime's
 * on Lambda. With write: false nothing is written (sizes and inputs come from esbuild's metafile).
 */
export async function buildBundles(
  sdk: SdkOption,
  outDir: string,
  { root = defaultRoot, write = true }: { root?: string; write?: boolean } = {},
): Promise<FunctionBundle[]> {
  const bundles: FunctionBundle[] = [];
  writeRepoEntries(root);
  for (const handler of lambdaHandlers) {
    const entry = handler.slice(0, handler.lastIndexOf("."));
    const outfile = join(outDir, `${entry}.mjs`);
    const result = await build({
      absWorkingDir: root,
      ...sstNodeBuildOptions(`${entry}.ts`, outfile, buildSettings(sdk)),
      write,
    });
    const output = mainOutput(result.metafile);
    const external = output.imports.filter((i) => i.external);
    bundles.push({
      name: functionName(handler),
      file: resolve(root, outfile),
      bytes: output.bytes,
      inputs: Object.keys(output.inputs),
      externals: [...new Set(external.map((i) => i.path))],
      initExternals: [...new Set(external.filter((i) => i.kind === "import-statement").map((i) => i.path))],
    });
  }
  return bundles;
}

function mainOutput(metafile: Metafile | undefined): Metafile["outputs"][string] {
  const output = Object.entries(metafile?.outputs ?? {}).find(([path]) => path.endsWith(".mjs"))?.[1];
  if (!output) throw new Error("esbuild wrote no .mjs output");
  return output;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const sdk of ["external", "bundled"] as const) {
    const bundles = await buildBundles(sdk, "", { write: false });
    for (const b of bundles) console.log(`${b.name.padEnd(8)} SDK ${sdk.padEnd(8)} ${b.bytes} bytes`);
  }
}
