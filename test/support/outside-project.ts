import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { projectRoot } from "./project-copy.ts";

/**
 * A project outside this repo, as another team's would be, for the tests of the packages it
 * installs (test/e2e/client-package.test.ts, test/e2e/skyforge-package.test.ts): a folder under the
 * system's temp dir, this repo's Node and tsc to run and check it.
 */
export const run = promisify(execFile);
export const repoNode = join(projectRoot, "node_modules", ".bin", "node");
export const repoTsc = join(projectRoot, "node_modules", "typescript", "bin", "tsc");
/** tsc's own library declarations (lib.es2022.d.ts…): the only files of a check that come from the repo. */
export const tscLibDir = realpathSync(join(projectRoot, "node_modules", "typescript", "lib"));

/**
 * Where this repo's files live, really: the repo, and the checkout its node_modules is in (it may
 * be a link into another). Nothing a project outside resolves may be under either.
 */
export const repoFolders: readonly string[] = [
  ...new Set([projectRoot, dirname(realpathSync(join(projectRoot, "node_modules")))]),
].map((dir) => (dir.endsWith("/") ? dir : `${dir}/`));

export interface OutsideProject {
  /** The temp folder that holds the project (and nothing a test reads as the project's). */
  parent: string;
  project: string;
}

/** A new, empty folder named `name` outside the repo (its package.json is the test's to write). */
export function outsideProjectDir(name: string): OutsideProject {
  const parent = mkdtempSync(join(tmpdir(), "skyforge-outside-"));
  const project = join(parent, name);
  mkdirSync(project);
  return { parent, project };
}

/** The environment of a command run in the project: no npm settings inherited from the npm that runs the tests. */
export function projectEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!/^npm_/i.test(key) && key !== "NODE_PATH" && key !== "NODE_OPTIONS") env[key] = value;
  }
  return {
    ...env,
    npm_config_audit: "false",
    npm_config_fund: "false",
    npm_config_update_notifier: "false",
    ...extra,
  };
}

/** npm's answer when no version it knows of meets a range: `No matching version found for …`. */
const NO_MATCHING_VERSION = /npm error code ETARGET/;

/**
 * A command of a guide that installs from the npm registry, run with the cache first
 * (`npm_config_prefer_offline` in `options.env`, so the suite doesn't ask the registry again for
 * every package document it holds). That setting takes a cached document whatever its age, so a
 * range that only a release published since needs (one of the AWS SDK's packages asking for a newer
 * `@aws-sdk/checksums`) is "not found", and npm doesn't look again itself. A user would run the
 * command again; so does this, once and asking the registry first. Any other failure is the test's.
 */
export async function runInstalling(
  file: string,
  args: readonly string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; timeout: number; maxBuffer?: number },
): Promise<{ stdout: string; stderr: string }> {
  try {
    return await run(file, args, options);
  } catch (err) {
    const { stdout = "", stderr = "" } = err as { stdout?: string; stderr?: string };
    if (!NO_MATCHING_VERSION.test(`${stdout}${stderr}`)) throw err;
    const { npm_config_prefer_offline: _cacheFirst, ...env } = options.env;
    return run(file, args, { ...options, env: { ...env, npm_config_prefer_online: "true" } });
  }
}

/**
 * tsc over `files` in the project (strict, NodeNext, its declarations' own imports checked too,
 * `options` added): its report, with `--listFiles` every file the program read. It writes the
 * JavaScript to out/ whatever the errors.
 */
export async function typeCheck(
  project: string,
  files: readonly string[],
  options: Record<string, unknown> = {},
  flags: readonly string[] = [],
): Promise<string> {
  writeFileSync(
    join(project, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "ES2022",
        module: "NodeNext",
        moduleResolution: "NodeNext",
        strict: true,
        outDir: "out",
        skipLibCheck: false,
        ...options,
      },
      files,
    }),
  );
  try {
    const out = await run(repoNode, [repoTsc, "-p", project, ...flags], { cwd: project, timeout: 120_000 });
    return out.stdout;
  } catch (err) {
    return (err as { stdout?: string }).stdout ?? String(err);
  }
}
