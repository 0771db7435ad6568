import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build, type Plugin } from "esbuild";
import { COMPONENT_REPORTS, type ComponentReport, SKYFORGE_TYPE } from "../../infra/component-report.ts";
import { type AuthorizerAnswers, probeAuthorizer } from "./authorizer-probe.ts";
import { SST_ESM_BANNER } from "./lambda-build.ts";
import type { ConstructedResource, RecordedCall, RecordedResource } from "./pulumi-mocks.ts";
import { type BuiltRecord, type DevTarget, startRpcStandIn } from "./rpc-stand-in.ts";

/**
 * Runs the app's sst.config.ts through SST's own platform code (.sst/platform, written by
 * `sst install`) the way the SST CLI does, with Pulumi's mocks in place of the AWS provider, and
 * returns every resource SST's components registered.
 */

export interface StageRun {
  stage: string;
  dev: boolean;
  resources: RecordedResource[];
  /** Every SST component as constructed, in order, with its final args (Outputs as markers). */
  constructed: ConstructedResource[];
  /** Each Skyforge component the program created, with what it was built from (infra/component-report.ts). */
  components: ComponentReport[];
  calls: RecordedCall[];
  outputs: Record<string, unknown>;
  builds: BuiltRecord[];
  devTargets: DevTarget[];
  rpcMethods: string[];
  /** Everything the program printed: SST and Pulumi warnings land here. */
  log: string;
  /** The settings laid over this process's environment for the program (runStage's `env`). */
  env: NodeJS.ProcessEnv;
  /** Each component's realtime authorizer, bundled and asked (authorizer-probe.ts), by component. */
  authorizers: Record<string, AuthorizerAnswers | { error: string }>;
}

/** The program threw: what it had constructed by then comes with the error. */
export class StageFailed extends Error {
  readonly constructed: ConstructedResource[];
  /** The message of the error the program threw, without its stack or the program's log. */
  readonly programError: string;
  /** Every resource registered before it threw. */
  readonly resources: RecordedResource[];

  constructor(
    message: string,
    constructed: ConstructedResource[],
    programError: string = message,
    resources: RecordedResource[] = [],
  ) {
    super(message);
    this.constructed = constructed;
    this.programError = programError;
    this.resources = resources;
  }
}

/**
 * Writes .sst/platform (SST's components, with the @pulumi/* packages they pin) if it is missing:
 * `sst install` needs only the npm registry, told not to fetch the Pulumi CLI and Bun.
 */
export function ensurePlatform(root: string): void {
  if (existsSync(join(root, ".sst", "platform", "src", "auto", "run.ts"))) return;
  execFileSync(join(root, "node_modules", ".bin", "sst"), ["install", "--stage", "ci"], {
    cwd: root,
    stdio: "inherit",
    env: { ...process.env, SST_SKIP_DEPENDENCY_CHECK: "1", SST_NO_BUN: "1", SST_TELEMETRY_DISABLED: "1" },
  });
}

/**
 * The app() half of sst.config.ts, evaluated as the CLI does before the program is built: bundled
 * by esbuild (packages left as imports), so a user's project needs no TypeScript runtime.
 */
async function appConfig(root: string, stage: string): Promise<Record<string, unknown>> {
  const global = globalThis as { $config?: (config: unknown) => unknown };
  global.$config ??= (config) => config;
  const outfile = join(root, ".sst", `check-deploy.config.${process.pid}.${stage}.mjs`);
  try {
    await build({
      entryPoints: [join(root, "sst.config.ts")],
      outfile,
      bundle: true,
      format: "esm",
      platform: "node",
      packages: "external",
      logLevel: "silent",
      absWorkingDir: root,
    });
    const mod = (await import(pathToFileURL(outfile).href)) as {
      default: { app(input: { stage: string }): Record<string, unknown> };
    };
    const config = await mod.default.app({ stage });
    return { providers: { aws: {} }, ...config, stage };
  } finally {
    rmSync(outfile, { force: true });
  }
}

/** The provider aliases the CLI prepends to every project file (from .sst/provider-lock.json). */
function providerImports(root: string, platform: string): string {
  const lock = JSON.parse(readFileSync(join(root, ".sst", "provider-lock.json"), "utf8")) as {
    alias: string;
    package: string;
  }[];
  return [
    ...lock.map((p) => `import * as ${p.alias} from "${p.package}";`),
    `import * as sst from "${join(platform, "src/components")}";`,
  ].join("\n");
}

function injectGlobals(globals: string): Plugin {
  return {
    name: "InjectGlobals",
    setup(b) {
      b.onLoad({ filter: /\.(js|ts|jsx|tsx)$/ }, async (args) => {
        const contents = await readFile(args.path, "utf8");
        const isPlatform = args.path.includes(".sst");
        return { contents: isPlatform ? contents : `${globals}\n${contents}`, loader: "default" };
      });
    },
  };
}

/**
 * The mocks' module beside this one: its source here, its built file where the proof ships in the
 * skyforge package (which keeps it a file of its own, since the program imports it by path).
 */
function mocksModule(): string {
  for (const name of ["./pulumi-mocks.ts", "./pulumi-mocks.js"]) {
    const file = fileURLToPath(new URL(name, import.meta.url));
    if (existsSync(file)) return file;
  }
  throw new Error(`no pulumi-mocks module beside ${fileURLToPath(import.meta.url)}`);
}

/** Bundles the program: the CLI's own esbuild step, with an entry that installs the mocks first. */
async function bundleProgram(root: string, stage: string, dev: boolean, outfile: string, home: string) {
  const work = join(root, ".sst");
  const platform = join(work, "platform");
  const app = await appConfig(root, stage);
  const cli = {
    command: dev ? "dev" : "deploy",
    dev,
    paths: { home, root, work, platform },
    state: { version: {} },
  };
  const mocks = mocksModule();
  const entry = `
    import * as pulumi from "@pulumi/pulumi";
    import { writeFileSync } from "node:fs";
    import * as sst from ${JSON.stringify(join(platform, "src/components"))};
    import { constructedComponents, recordComponents, recordingMocks } from ${JSON.stringify(mocks)};
    const resources = [];
    const calls = [];
    const components = [];
    const out = { resources, calls, constructed: [], components: [], outputs: {}, error: null, message: null };
    // Each resource's parent, as Pulumi registers it: a resource belongs to the Skyforge component
    // above it (the mocks see names and types, not parents).
    const owners = new Map();
    // SST creates some resources without a parent but named after the component that spawned them
    // (an API's routes, a queue's subscriber, a service's dev command): such a resource belongs to
    // the Skyforge component whose child begins its name.
    const spawnedBy = (name) =>
      (globalThis[Symbol.for(${JSON.stringify(COMPONENT_REPORTS.description)})] ?? []).find((c) =>
        c.children.some((child) => name.startsWith(child)),
      )?.name;
    const componentOf = (type, name) => {
      const seen = new Set();
      let key = type + "::" + name;
      let top = name;
      while (owners.has(key) && !seen.has(key)) {
        seen.add(key);
        const owner = owners.get(key);
        if (!owner) break;
        if (owner[0] === ${JSON.stringify(SKYFORGE_TYPE)}) return owner[1];
        top = owner[1];
        key = owner[0] + "::" + owner[1];
      }
      return key.startsWith(${JSON.stringify(SKYFORGE_TYPE)} + "::") ? undefined : spawnedBy(top);
    };
    // Written however the program ends: a failure that escapes as an unhandled rejection still
    // reports what was constructed before it.
    process.on("unhandledRejection", (error) => {
      out.error ??= String(error?.stack ?? error);
      out.message ??= String(error?.message ?? error);
    });
    process.on("exit", () => {
      out.constructed = constructedComponents(components, pulumi.Output.isInstance);
      for (const r of [...resources, ...out.constructed]) r.component = componentOf(r.type, r.name);
      out.components = globalThis[Symbol.for(${JSON.stringify(COMPONENT_REPORTS.description)})] ?? [];
      writeFileSync(process.env.CHECK_DEPLOY_OUT, JSON.stringify(out));
    });
    try {
      await pulumi.runtime.setMocks(recordingMocks(resources, calls), ${JSON.stringify(String(app.name))}, ${JSON.stringify(stage)}, false);
      recordComponents([...Object.values(sst.aws), ...Object.values(sst.x)], $transform, components);
      const { run } = await import(${JSON.stringify(join(platform, "src/auto/run.ts"))});
      const mod = await import(${JSON.stringify(join(root, "sst.config.ts"))});
      const outputs = await pulumi.runtime.runInPulumiStack(() => {
        pulumi.runtime.registerStackTransformation((args) => {
          const parent = args.opts.parent;
          owners.set(args.type + "::" + args.name, parent ? [parent.__pulumiType, parent.__name] : null);
          return undefined;
        });
        return run(mod.default.run);
      });
      await pulumi.runtime.disconnect();
      out.outputs = await new Promise((resolve) => pulumi.output(outputs ?? {}).apply(resolve));
    } catch (error) {
      out.error = String(error?.stack ?? error);
      out.message = String(error?.message ?? error);
    }
  `;
  await build({
    stdin: { contents: entry, resolveDir: root, sourcefile: "eval.ts", loader: "ts" },
    outfile,
    bundle: true,
    format: "esm",
    platform: "node",
    mainFields: ["module", "main"],
    sourcemap: "linked",
    nodePaths: [join(platform, "node_modules")],
    define: { $app: JSON.stringify(app), $cli: JSON.stringify(cli), $dev: String(dev) },
    inject: [join(platform, "src/shim/run.js")],
    plugins: [injectGlobals(providerImports(root, platform))],
    external: [
      "@pulumi/*",
      "undici",
      "@pulumiverse/*",
      "@sst-provider/*",
      "@aws-sdk/*",
      "esbuild",
      "archiver",
      "glob",
      "vite",
    ],
    banner: { js: SST_ESM_BANNER },
    logLevel: "silent",
  });
}

/**
 * Builds and runs the program for one stage in a fresh Node process; the RPC stand-in runs here.
 * `env` is laid over this process's environment for the program (infra reads some settings, such
 * as SKYFORGE_ALARM_EMAIL, from it); an undefined value removes a variable.
 */
export async function runStage(
  root: string,
  stage: string,
  dev: boolean,
  options: { env?: NodeJS.ProcessEnv } = {},
): Promise<StageRun> {
  const scratch = mkdtempSync(join(tmpdir(), `check-deploy-${stage}-`));
  // The bundle sits inside .sst/platform, so its externals resolve from the platform's node_modules.
  const program = join(root, ".sst", "platform", `check-deploy.${stage}.${process.pid}.mjs`);
  const rpc = await startRpcStandIn(root, join(scratch, "work"));
  try {
    await bundleProgram(root, stage, dev, program, join(scratch, "home"));
    const outFile = join(scratch, "out.json");
    const { code, log } = await new Promise<{ code: number | null; log: string }>((resolve, reject) => {
      const child = spawn(process.execPath, [program], {
        cwd: root,
        env: {
          ...process.env,
          ...options.env,
          SST_SERVER: rpc.url,
          CHECK_DEPLOY_OUT: outFile,
          SST_STAGE: stage,
          AWS_REGION: "us-east-1",
          SST_AWS_REGION: "us-east-1",
        },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let output = "";
      child.stdout.on("data", (chunk) => {
        output += chunk;
      });
      child.stderr.on("data", (chunk) => {
        output += chunk;
      });
      child.on("error", reject);
      child.on("exit", (code) => resolve({ code, log: output }));
    });
    if (!existsSync(outFile)) throw new Error(`the ${stage} program exited ${code} with no report:\n${log}`);
    const out = JSON.parse(readFileSync(outFile, "utf8")) as {
      resources: RecordedResource[];
      calls: RecordedCall[];
      constructed: ConstructedResource[];
      components: ComponentReport[];
      outputs: Record<string, unknown>;
      error: string | null;
      message: string | null;
    };
    if (out.error || code !== 0) {
      throw new StageFailed(
        `SST's components failed for stage ${stage} (exit ${code}):\n${out.error}\n${log}`,
        out.constructed,
        out.message ?? `exit ${code}`,
        out.resources,
      );
    }
    const authorizers = Object.fromEntries(
      await Promise.all(
        out.components.map(async (c) => [c.name, await probeAuthorizer(root, c, out.resources)] as const),
      ),
    );
    return {
      stage,
      dev,
      authorizers,
      resources: out.resources,
      constructed: out.constructed,
      components: out.components,
      calls: out.calls,
      outputs: out.outputs,
      builds: rpc.builds,
      devTargets: rpc.devTargets,
      rpcMethods: rpc.methods,
      log,
      env: options.env ?? {},
    };
  } finally {
    await rpc.close();
    rmSync(program, { force: true });
    rmSync(`${program}.map`, { force: true });
    rmSync(scratch, { recursive: true, force: true });
  }
}
