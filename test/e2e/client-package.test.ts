import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { docBlocks } from "../support/doc-blocks.ts";
import { type StackProcess, startStackProcess } from "../support/local-stack-process.ts";
import { repoNode as node, outsideProjectDir, run, typeCheck } from "../support/outside-project.ts";
import { projectRoot } from "../support/project-copy.ts";

/**
 * The client from another project, as README.md's "Use the client from another project" says (issue
 * 30): its bash block, run as written with `../my-service` a new project outside the repo, builds and
 * packs `@skyforge/client`, writes the app's types there and installs the tarball; its TypeScript block
 * is that project's producer: type-checked against the installed package, compiled by tsc, and run
 * by plain Node (type stripping off) against `npm start`. The same block with the kind misspelled
 * doesn't compile.
 *
 * npm installs the tarball with the registry off (npm_config_offline): the package's dependencies and
 * peers are the repo's installed copies, linked into the project first (as a workspace would), so
 * the install only has to check that they satisfy the package's ranges.
 */
const README = "README.md";
const MARK = "checked by test/e2e/client-package.test.ts";
const blocks = docBlocks(README).filter((b) => b.marker?.startsWith(MARK));
const bashBlock = blocks.find((b) => b.lang === "bash")?.text ?? "";
const producerBlock = blocks.find((b) => b.lang === "ts")?.text ?? "";
/** Linked from the repo's node_modules before the install: the package's dependencies and its required peer. */
const LINKED = ["zod", "@smithy/signature-v4", "@aws-crypto/sha256-js", "@opentelemetry/api"];
/**
 * Linked after it, as the project's own `npm install` of them would add them (npm prunes what no
 * manifest names): Node's types, and the optional peer the invoke entry needs.
 */
const LINKED_AFTER = ["@types/node", "@aws-sdk/client-lambda"];

let stack: StackProcess;
let project: string;
let installLog = "";
/** tsc's report on the README's producer and its misspelled copy, compiled as one program. */
let typeCheckReport = "";

beforeAll(async () => {
  project = outsideProjectDir("my-service").project;
  writeFileSync(
    join(project, "package.json"),
    '{ "name": "my-service", "private": true, "type": "module" }\n',
  );
  link(LINKED);
  stack = await startStackProcess();
  const script = bashBlock.replaceAll("../my-service", project);
  const out = await run("bash", ["-euo", "pipefail", "-c", script], {
    cwd: projectRoot,
    env: { ...process.env, npm_config_offline: "true", npm_config_audit: "false", npm_config_fund: "false" },
    timeout: 120_000,
  });
  installLog = `${out.stdout}${out.stderr}`;
  link(LINKED_AFTER);
  writeFileSync(join(project, "producer.ts"), producerBlock);
  writeFileSync(
    join(project, "misspelled.ts"),
    producerBlock.replace('jobs.enqueue("echo"', 'jobs.enqueue("ecko"'),
  );
  typeCheckReport = await typeCheck(project, ["producer.ts", "misspelled.ts"], { types: ["node"] });
}, 240_000);

function link(names: readonly string[]): void {
  for (const name of names) {
    mkdirSync(dirname(join(project, "node_modules", name)), { recursive: true });
    symlinkSync(join(projectRoot, "node_modules", name), join(project, "node_modules", name));
  }
}

afterAll(async () => {
  await stack?.interrupt();
  if (project) rmSync(dirname(project), { recursive: true, force: true });
});

describe("@skyforge/client in a project outside the repo", { timeout: 120_000 }, () => {
  it("the README's blocks are found, and the install took the packed tarball", () => {
    expect(bashBlock).toContain("npm pack ./packages/client");
    expect(producerBlock).toContain("createClient<SkyforgeApp>");
    const manifest = JSON.parse(readFileSync(join(project, "package.json"), "utf8"));
    expect(manifest.dependencies["@skyforge/client"]).toBe("file:skyforge-client-0.1.0.tgz");
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
    const errors = typeCheckReport.split("\n").filter((l) => /error TS/.test(l));
    expect(errors).toEqual([
      expect.stringMatching(new RegExp(`^misspelled\\.ts\\(${line},\\d+\\): error TS2345: .*"ecko"`)),
    ]);
  });

  it("the README's producer runs on plain Node against npm start", async () => {
    const { stdout } = await run(
      node,
      ["--no-experimental-strip-types", join(project, "out", "producer.js")],
      {
        cwd: project,
        env: { ...process.env, SKYFORGE_ENDPOINT: stack.url },
        timeout: 30_000,
      },
    );
    expect(stdout.trim()).toBe("done { hello: 'world' }");
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
});
