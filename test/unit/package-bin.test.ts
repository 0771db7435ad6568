import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundlePackage } from "../../scripts/build-packages.ts";
import { projectRoot } from "../support/project-copy.ts";

/**
 * The `skyforge` package's bin (packages/skyforge/src/bin.ts), built: `dev` and `check-deploy` go to
 * the function their own entry exports, with the arguments after the command, and the process ends
 * with its exit code; a build without the entry says so (exit 70); anything else is the CLI. The
 * entries here are stand-ins written beside the built bin (the real ones are the dev and component
 * parts of issue 38): what is under test is the dispatch.
 */
const run = promisify(execFile);
let folder: string;
let dist: string;

beforeAll(async () => {
  // The bin's packages resolve from the repo's node_modules, linked beside its dist/.
  folder = mkdtempSync(join(tmpdir(), "skyforge-package-bin-"));
  symlinkSync(join(projectRoot, "node_modules"), join(folder, "node_modules"));
  writeFileSync(join(folder, "package.json"), '{ "type": "module" }\n');
  dist = join(folder, "dist");
  await bundlePackage("skyforge", dist);
}, 60_000);

afterAll(() => {
  if (folder) rmSync(folder, { recursive: true, force: true });
});

async function bin(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [join(dist, "bin.js"), ...args], {
      timeout: 30_000,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const standIn = (name: string, code: number) =>
  `export async function ${name}(argv) { console.log(JSON.stringify({ ${name}: argv })); return ${code}; }\n`;

describe("the package's bin", { timeout: 30_000 }, () => {
  it("runs dev's and check-deploy's entries with the arguments after the command, and exits with their code", async () => {
    writeFileSync(join(dist, "dev.js"), standIn("runDev", 0));
    writeFileSync(join(dist, "check-deploy.js"), standIn("runCheckDeploy", 3));
    const dev = await bin(["dev", "--app", "src/jobs/app.ts", "--json"]);
    expect(dev).toMatchObject({ code: 0, stdout: '{"runDev":["--app","src/jobs/app.ts","--json"]}\n' });
    const check = await bin(["check-deploy", "--stage", "prod"]);
    expect(check).toMatchObject({ code: 3, stdout: '{"runCheckDeploy":["--stage","prod"]}\n' });
  });

  it("a build without the entry says so, exit 70", async () => {
    rmSync(join(dist, "dev.js"), { force: true });
    const dev = await bin(["dev"]);
    expect(dev.code).toBe(70);
    expect(dev.stderr).toMatch(
      /^skyforge: "dev" is not in this build of skyforge \(.*dev\.js is missing or exports no runDev\)\n$/,
    );
  });

  it("anything else is the operator CLI, whose help lists the project commands", async () => {
    const help = await bin(["help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/\n {2}queues\b/);
    expect(help.stdout).toMatch(/\n {2}dev\s+run the local stack/);
    const version = await bin(["--version"]);
    expect(version.stdout).toMatch(/^0\.1\.0 \(node v/);
    const unknown = await bin(["frobnicate"]);
    expect(unknown.code).toBe(2);
  });
});
