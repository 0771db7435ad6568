import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { docBlocks } from "../support/doc-blocks.ts";
import { type LocalRegistry, startLocalRegistry } from "../support/local-registry.ts";
import { type StackProcess, startStackProcess } from "../support/local-stack-process.ts";
import { withPackagesDistLock } from "../support/packages-dist-lock.ts";
import { projectRoot } from "../support/project-copy.ts";

/**
 * The client from another project, as README.md's "Use the client from another project" says: its
 * first bash block, run as written from an empty folder (`../my-service` doesn't exist yet), builds
 * and packs `@skyforge/client`, writes the app's types there, makes it an ES module project and
 * installs the tarball and TypeScript; its TypeScript block is that project's producer.ts; its second
 * bash block type-checks and compiles it with tsc and runs it on plain Node against `npm start`. The
 * same producer with the kind misspelled doesn't compile.
 *
 * npm installs from a registry on loopback (test/support/local-registry.ts) that serves the repo's
 * installed copies of what the block installs (the package's dependencies and required peer,
 * typescript, @types/node) and their own, with a cache of its own: no network, nothing shared.
 */
const run = promisify(execFile);
const README = "README.md";
const MARK = "checked by test/e2e/client-package.test.ts";
const blocks = docBlocks(README).filter((b) => b.marker?.startsWith(MARK));
const [setupBlock = "", runBlock = ""] = blocks.filter((b) => b.lang === "bash").map((b) => b.text);
const producerBlock = blocks.find((b) => b.lang === "ts")?.text ?? "";
const clientManifest = JSON.parse(
  readFileSync(join(projectRoot, "packages", "client", "package.json"), "utf8"),
) as {
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
};
/** What the setup block's installs fetch: the package's dependencies and required peers, and the tools it names. */
const REGISTRY = [
  ...Object.keys(clientManifest.dependencies),
  ...Object.keys(clientManifest.peerDependencies).filter(
    (p) => !clientManifest.peerDependenciesMeta[p]?.optional,
  ),
  "typescript",
  "@types/node",
];
/** Linked after the install, as the project's own `npm install` of it would add it: the optional peer the invoke entry needs. */
const LINKED_AFTER = ["@aws-sdk/client-lambda"];
const node = join(projectRoot, "node_modules", ".bin", "node");

let stack: StackProcess;
let registry: LocalRegistry;
let parent: string;
let project: string;
let installLog = "";
/** What the README's compile-and-run block printed. */
let producerRun = "";
/** tsc's report on the misspelled copy, compiled by the README's tsc command. */
let misspelledReport = "";
/** The npm settings every command of the blocks runs with: the loopback registry, a cache of its own. */
let npmEnv: Record<string, string>;

beforeAll(async () => {
  parent = mkdtempSync(join(tmpdir(), "skyforge-consumer-"));
  project = join(parent, "my-service");
  registry = await startLocalRegistry(projectRoot, REGISTRY);
  npmEnv = {
    npm_config_registry: `${registry.url}/`,
    npm_config_cache: join(parent, "npm-cache"),
    npm_config_audit: "false",
    npm_config_fund: "false",
    npm_config_update_notifier: "false",
  };
  stack = await startStackProcess();
  // It builds and packs packages/client: no other file's build may empty its dist/ meanwhile.
  const out = await withPackagesDistLock(() =>
    run("bash", ["-euo", "pipefail", "-c", setupBlock.replaceAll("../my-service", project)], {
      cwd: projectRoot,
      env: { ...process.env, ...npmEnv },
      timeout: 180_000,
    }),
  );
  installLog = `${out.stdout}${out.stderr}`;
  for (const name of LINKED_AFTER) {
    mkdirSync(dirname(join(project, "node_modules", name)), { recursive: true });
    symlinkSync(join(projectRoot, "node_modules", name), join(project, "node_modules", name));
  }
  writeFileSync(join(project, "producer.ts"), producerBlock);
  writeFileSync(
    join(project, "misspelled.ts"),
    producerBlock.replace('jobs.enqueue("echo"', 'jobs.enqueue("ecko"'),
  );
  // The README's compile-and-run block, and its tsc command on the misspelled copy: tsc checks the
  // package's declarations and Node's types too (no skipLibCheck), which takes a while on a busy machine.
  producerRun = await outputOf(inProject(runBlock, { SKYFORGE_ENDPOINT: stack.url }));
  misspelledReport = await outputOf(
    inProject((runBlock.split("&&")[0] as string).replace("producer.ts", "misspelled.ts")),
  );
}, 480_000);

/** A command's stdout, whether it succeeded or not (tsc reports its errors there). */
const outputOf = (ran: Promise<{ stdout: string }>) =>
  ran.then(
    (out) => out.stdout,
    (err: { stdout?: string; stderr?: string }) => `${err.stdout ?? ""}${err.stderr ?? String(err)}`,
  );

afterAll(async () => {
  await stack?.interrupt();
  await registry?.close();
  if (parent) rmSync(parent, { recursive: true, force: true });
});

/** A command of the README's, run by bash in the project, as the reader runs it there. */
function inProject(script: string, env: Record<string, string> = {}) {
  return run("bash", ["-euo", "pipefail", "-c", script], {
    cwd: project,
    env: { ...process.env, ...npmEnv, ...env },
    timeout: 240_000,
  });
}

describe("@skyforge/client in a project outside the repo", { timeout: 120_000 }, () => {
  it("the README's blocks are found; the project was made from nothing, an ES module with the packed tarball and TypeScript", () => {
    expect(setupBlock).toContain("npm pack ./packages/client");
    expect(setupBlock).toMatch(/^mkdir -p \.\.\/my-service$/m);
    expect(producerBlock).toContain("createClient<SkyforgeApp>");
    expect(runBlock).toMatch(/^npx tsc producer\.ts .*&& node out\/producer\.js$/m);
    const manifest = JSON.parse(readFileSync(join(project, "package.json"), "utf8"));
    expect(manifest.type).toBe("module");
    expect(manifest.dependencies["@skyforge/client"]).toBe("file:skyforge-client-0.1.0.tgz");
    expect(Object.keys(manifest.devDependencies).sort()).toEqual(["@types/node", "typescript"]);
    expect(installLog).toContain("wrote");
  });

  it("ships JavaScript and declarations only: no TypeScript source to run", async () => {
    const { stdout } = await run("tar", ["tzf", join(project, "skyforge-client-0.1.0.tgz")]);
    const files = stdout.trim().split("\n");
    expect(files).toContain("package/dist/index.js");
    expect(files).toContain("package/dist/types/client/index.d.ts");
    expect(files).toContain("package/LICENSE");
    const stray = files.filter((f) => !/(\.js|\.d\.ts|\/package\.json|\/README\.md|\/LICENSE)$/.test(f));
    expect(stray).toEqual([]);
  });

  it("the app's types: kinds by name with their payloads, and the queues", () => {
    const types = readFileSync(join(project, "skyforge-app.d.ts"), "utf8");
    expect(types).toContain("export interface SkyforgeApp {");
    expect(types).toMatch(/\n {4}echo: EchoPayload;\n/);
    expect(types).toMatch(/\n {4}sleep: SleepPayload;\n/);
    expect(types).toMatch(/export type SleepPayload = \{\n {2}ms: number;\n\};/);
    expect(types).toMatch(/queues: "default" \| "batch" \| "heavy";/);
  });

  it("the README's producer type-checks; the same with a misspelled kind doesn't", () => {
    expect(producerBlock).toContain('jobs.enqueue("echo"');
    const line = producerBlock.split("\n").findIndex((l) => l.includes('jobs.enqueue("echo"')) + 1;
    const errors = misspelledReport.split("\n").filter((l) => /error TS/.test(l));
    expect(errors).toEqual([
      expect.stringMatching(new RegExp(`^misspelled\\.ts\\(${line},\\d+\\): error TS2345: .*"ecko"`)),
    ]);
  });

  it("the README's producer compiles with the README's command and runs on plain Node against npm start", () => {
    // tsc found no error (it would have printed it, and && would not have run node).
    expect(producerRun.trim()).toBe("done { hello: 'world' }");
  });

  it("the invoke entry, with its optional peer installed: Lambda Invoke of npm start's API function", async () => {
    const script = [
      'import { createClient } from "@skyforge/client";',
      'import { invokeTransport } from "@skyforge/client/invoke";',
      'const transport = invokeTransport({ functionName: "api", endpoint: process.env.SKYFORGE_ENDPOINT });',
      'const { job } = await createClient({ transport }).enqueue("echo", 42);',
      "transport.close();",
      "console.log(job.kind, job.status);",
      "",
    ].join("\n");
    writeFileSync(join(project, "invoke.mjs"), script);
    const { stdout } = await run(node, ["--no-experimental-strip-types", join(project, "invoke.mjs")], {
      cwd: project,
      env: { ...process.env, SKYFORGE_ENDPOINT: stack.url },
      timeout: 30_000,
    });
    expect(stdout.trim()).toBe("echo queued");
  });

  it("jobs.search from the package: tagged jobs found by their tag, newest first, and a time window", async () => {
    const tag = `package-${Date.now()}`;
    const script = [
      'import { createClient } from "@skyforge/client";',
      "const jobs = createClient();",
      `const a = await jobs.enqueue("echo", 1, { tags: ["${tag}"] });`,
      `const b = await jobs.enqueue("echo", 2, { tags: ["${tag}", "other"] });`,
      `const page = await jobs.jobs.search({ tag: "${tag}", createdAfter: new Date(Date.now() - 60_000) });`,
      `const none = await jobs.jobs.search({ tag: "${tag}", createdBefore: new Date(0) });`,
      "const ids = page.items.map((j) => j.id);",
      'console.log(ids.join(",") === [b.job.id, a.job.id].join(","), page.items[0].tags.join("+"), none.items.length);',
      "",
    ].join("\n");
    writeFileSync(join(project, "search.mjs"), script);
    const { stdout } = await run(node, ["--no-experimental-strip-types", join(project, "search.mjs")], {
      cwd: project,
      env: { ...process.env, SKYFORGE_ENDPOINT: stack.url },
      timeout: 30_000,
    });
    expect(stdout.trim()).toBe(`true ${tag}+other 0`);
  });

  it("the realtime entry, typed: a process holding only a token follows an llm-echo job to its end", async () => {
    const { stdout: files } = await run("tar", ["tzf", join(project, "skyforge-client-0.1.0.tgz")]);
    expect(files.split("\n")).toContain("package/dist/types/client/realtime.d.ts");
    // The producer mints the token; the follower is given only its url and token, as a browser is.
    const script = [
      'import { createClient } from "@skyforge/client";',
      'import { subscribe } from "@skyforge/client/realtime";',
      "const jobs = createClient();",
      'const { job } = await jobs.enqueue("llm-echo", { text: "one two three", delayMs: 5 });',
      "const { url, token } = await jobs.subscription(job.id);",
      "const words = [];",
      "let last;",
      "for await (const event of subscribe({ url, token })) {",
      '  if (event.type === "stream" && !event.closed) words.push(event.chunk);',
      "  last = event;",
      "}",
      "const again = [];",
      'for await (const event of jobs.subscribe(job.id, { from: 2 })) if (event.type === "stream") again.push(event.seq);',
      'console.log(words.join(" "), last.type, last.status, again.join(","));',
      "",
    ].join("\n");
    writeFileSync(join(project, "follow.mjs"), script);
    const { stdout } = await run(node, ["--no-experimental-strip-types", join(project, "follow.mjs")], {
      cwd: project,
      env: { ...process.env, SKYFORGE_ENDPOINT: stack.url },
      timeout: 30_000,
    });
    expect(stdout.trim()).toBe("one two three end done 3,4");
  });
});
