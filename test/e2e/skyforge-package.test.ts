import { execFile } from "node:child_process";
import { lstatSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildPackage } from "../../scripts/build-packages.ts";
import { docBlocks } from "../support/doc-blocks.ts";
import {
  type OutsideProject,
  outsideProjectDir,
  projectEnv,
  repoFolders,
  run,
  runInstalling,
  tscLibDir,
  typeCheck,
} from "../support/outside-project.ts";
import { withPackagesDistLock } from "../support/packages-dist-lock.ts";
import { projectRoot } from "../support/project-copy.ts";

/**
 * The `skyforge` package in a project outside the repo, as packages/skyforge/README.md says (issue
 * 38): built (what `npm run build:packages` runs for it), packed and installed by the README's bash
 * block into a new folder holding only `npm init -y` and `"type": "module"`, its dependencies from
 * npm (the cache first: npm_config_prefer_offline), none from this repo. The README's app module,
 * producer and bound builders are type-checked there with this repo's tsc, the producer with a
 * misspelled kind and with a wrong payload too; the installed bin answers `--help` and reads the
 * app module's kinds. A resolve hook in every Node process started in the project fails it when a
 * module resolves from this repo's folders.
 */
const execFileAsync = promisify(execFile);
const README = "packages/skyforge/README.md";
const MARK = "checked by test/e2e/skyforge-package.test.ts";
const blocks = docBlocks(README).filter((b) => b.marker?.startsWith(MARK));
const bashBlock = blocks.find((b) => b.lang === "bash")?.text ?? "";
/** The README's TypeScript blocks by the file the marker names: "app.ts", "producer.ts", "bound.ts". */
const tsFiles = new Map(
  blocks
    .filter((b) => b.lang === "ts")
    .map((b) => [/: (\S+\.ts)/.exec(b.marker ?? "")?.[1] ?? "", b.text] as const),
);
const BUILD = "npm run build:packages && ";

let where: OutsideProject;
let project: string;
/** The environment of every command in the project: Node 24 first on the PATH, nothing from the repo's. */
let env: NodeJS.ProcessEnv;
let installLog = "";
let tscReport = "";

beforeAll(async () => {
  where = outsideProjectDir("my-app");
  project = where.project;
  const guard = join(where.parent, "resolve-guard.mjs");
  writeFileSync(
    guard,
    [
      'import { registerHooks } from "node:module";',
      `const repo = ${JSON.stringify(repoFolders.map((dir) => `file://${dir}`))};`,
      "registerHooks({",
      "  resolve(specifier, context, next) {",
      "    const resolved = next(specifier, context);",
      "    if (repo.some((dir) => resolved.url.startsWith(dir)))",
      '      throw new Error("resolved from the skyforge repo: " + specifier + " -> " + resolved.url);',
      "    return resolved;",
      "  },",
      "});",
      "",
    ].join("\n"),
  );
  // The Node running the tests (24: the package wants 22.5 or later) first, then the PATH without the repo's bins.
  const outside = (process.env.PATH ?? "")
    .split(":")
    .filter((dir) => !repoFolders.some((r) => `${dir}/`.startsWith(r)));
  const path = [dirname(process.execPath), ...outside].join(":");
  env = projectEnv({ PATH: path, npm_config_prefer_offline: "true" });
  await run("npm", ["init", "-y"], { cwd: project, env });
  await run("npm", ["pkg", "set", "type=module"], { cwd: project, env });

  // It builds and packs packages/skyforge: no other file's build may empty its dist/ meanwhile.
  const script = bashBlock.slice(BUILD.length).replaceAll("../my-app", project);
  const out = await withPackagesDistLock(async () => {
    await buildPackage("skyforge");
    return runInstalling("bash", ["-euo", "pipefail", "-c", script], {
      cwd: projectRoot,
      env,
      timeout: 150_000,
    });
  });
  installLog = `${out.stdout}${out.stderr}`;
  env.NODE_OPTIONS = `--import ${pathToFileURL(guard).href}`;

  for (const [file, text] of tsFiles) writeFileSync(join(project, file), text);
  const producer = tsFiles.get("producer.ts") ?? "";
  writeFileSync(join(project, "misspelled.ts"), producer.replace('enqueue("greet"', 'enqueue("graet"'));
  writeFileSync(join(project, "wrong-payload.ts"), producer.replace("{ a: 1, b: 2 }", '{ a: 1, b: "2" }'));
  // A project that holds only the package has no @types/node: the DOM library stands in for the
  // globals the producer uses (console), and the packages' declarations are not checked themselves
  // (skipLibCheck, as `tsc --init` writes it: the AWS SDK's declarations name Node's modules).
  tscReport = await typeCheck(
    project,
    ["app.ts", "producer.ts", "bound.ts", "misspelled.ts", "wrong-payload.ts"],
    { lib: ["ES2023", "DOM"], types: [], skipLibCheck: true },
    ["--listFiles"],
  );
}, 240_000);

afterAll(() => {
  if (where) rmSync(where.parent, { recursive: true, force: true });
});

/** Runs the installed bin the way a user does, from the project. */
const skyforge = (args: readonly string[]) =>
  execFileAsync("npx", ["--no-install", "skyforge", ...args], { cwd: project, env, timeout: 30_000 });

describe("the skyforge package in a project outside the repo", { timeout: 60_000 }, () => {
  it("the README's blocks are found, and the install took the packed tarball from outside the repo", () => {
    expect(bashBlock.startsWith(BUILD)).toBe(true);
    expect([...tsFiles.keys()].sort()).toEqual(["app.ts", "bound.ts", "producer.ts"]);
    expect(repoFolders.some((dir) => project.startsWith(dir))).toBe(false);
    const manifest = JSON.parse(readFileSync(join(project, "package.json"), "utf8"));
    expect(manifest.type).toBe("module");
    expect(manifest.dependencies).toEqual({ skyforge: "file:skyforge-0.1.0.tgz" });
    expect(installLog).toMatch(/added \d+ packages/);
    // Every package is a folder of its own: none is a link to anything, the repo's included.
    const modules = join(project, "node_modules");
    const packages = readdirSync(modules)
      .filter((name) => name !== ".bin" && !name.startsWith(".package-lock"))
      .flatMap((name) =>
        name.startsWith("@") ? readdirSync(join(modules, name)).map((n) => `${name}/${n}`) : [name],
      );
    expect(packages).toContain("skyforge");
    expect(packages.filter((name) => lstatSync(join(modules, name)).isSymbolicLink())).toEqual([]);
  });

  it("ships JavaScript, declarations, the console's files and the license: no source, no demo app", async () => {
    const { stdout } = await run("tar", ["tzf", join(project, "skyforge-0.1.0.tgz")]);
    const files = stdout.trim().split("\n");
    for (const file of [
      "dist/index.js",
      "dist/client.js",
      "dist/bin.js",
      "LICENSE",
      "CHANGELOG.md",
      "README.md",
    ]) {
      expect(files).toContain(`package/${file}`);
    }
    expect(files).toContain("package/dist/types/packages/skyforge/src/index.d.ts");
    expect(files).toContain("package/dist/console/index.html");
    expect(files).toContain("package/dist/console/realtime.mjs");
    expect(files.filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))).toEqual([]);
    expect(files.filter((f) => /\/app\//.test(f))).toEqual([]);
    const stray = files.filter(
      (f) => !/(\.m?js|\.d\.ts|\.html|\.css|\/package\.json|\.md|\/LICENSE)$/.test(f),
    );
    expect(stray).toEqual([]);
  });

  it("the README's app module, producer and bound builders type-check; a misspelled kind and a wrong payload don't", () => {
    const producer = tsFiles.get("producer.ts") ?? "";
    const lineOf = (needle: string) => producer.split("\n").findIndex((l) => l.includes(needle)) + 1;
    const errors = tscReport.split("\n").filter((l) => /error TS/.test(l));
    expect(errors).toEqual([
      expect.stringMatching(
        new RegExp(`^misspelled\\.ts\\(${lineOf('enqueue("greet"')},\\d+\\): error TS2345: .*"graet"`),
      ),
      expect.stringMatching(
        new RegExp(
          `^wrong-payload\\.ts\\(${lineOf("{ a: 1, b: 2 }")},\\d+\\): error TS2322: Type 'string' is not assignable to type 'number'`,
        ),
      ),
    ]);
  });

  it("the type check read the installed package, and nothing of the repo's but tsc's own library", () => {
    const read = tscReport.split("\n").filter((l) => l.startsWith("/"));
    expect(read).toContain(
      join(project, "node_modules", "skyforge", "dist", "types", "client", "index.d.ts"),
    );
    expect(read.some((f) => f.startsWith(join(project, "node_modules", "zod")))).toBe(true);
    const fromRepo = read.filter(
      (f) => !f.startsWith(`${tscLibDir}/`) && repoFolders.some((d) => f.startsWith(d)),
    );
    expect(fromRepo).toEqual([]);
  });

  it("npx skyforge --help answers from the installed bin, with the project commands listed", async () => {
    const { stdout, stderr } = await skyforge(["--help"]);
    expect(stderr).not.toMatch(/resolved from the skyforge repo/);
    expect(stdout).toMatch(/^Usage: skyforge \[options\] \[command\]/);
    expect(stdout).toMatch(/\n {2}jobs\b/);
    expect(stdout).toMatch(/\n {2}dev\s+run the local stack over your app's kinds/);
    expect(stdout).toMatch(/\n {2}check-deploy\s+render sst\.config\.ts/);
  });

  it("npx skyforge types reads the README's app module through the installed package", async () => {
    const { stdout } = await skyforge(["types", "--app", "app.ts"]);
    expect(stdout).toContain("export interface SkyforgeApp {");
    expect(stdout).toMatch(/\n {4}greet: GreetPayload;\n {4}add: AddPayload;\n/);
    expect(stdout).toMatch(/queues: "default";/);
  });
});
