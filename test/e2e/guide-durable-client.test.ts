import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, expect, it } from "vitest";
import { app } from "../../app/index.ts";
import { codeBlocks } from "../support/doc-blocks.ts";
import { projectRoot } from "../support/project-copy.ts";
import { localStackForFile } from "../support/stack-for-file.ts";

/**
 * docs/guide/enqueue.md's durable-jobs block of the typed client, run as written against the stack
 * `npm start` runs (local/stack.ts over app/, started in this process; the block is type-checked by
 * test/unit/guide-durable-client.test.ts): `jobs` is the guide's client of the block above it,
 * pointed at this stack. It must reach its token branch (it prints the completed token's status)
 * and resume the job its event is for (it prints how many it resumed).
 */
const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), "skyforge-guide-durable-"));
const stack = localStackForFile({ app });
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it("docs/guide/enqueue.md's durable client block completes its token and resumes its event's job", async () => {
  const blocks = codeBlocks("docs/guide/enqueue.md", "ts").filter((b) => b.startsWith("// Durable jobs"));
  expect(blocks).toHaveLength(1);
  writeFileSync(join(dir, "package.json"), '{ "type": "module" }');
  const prelude = [
    `import { app } from "${join(projectRoot, "app/index.ts")}";`,
    `import { createClient } from "${join(projectRoot, "client/create-client.ts")}";`,
    `import { httpTransport } from "${join(projectRoot, "client/http-transport.ts")}";`,
    `const jobs = createClient({ app, transport: httpTransport({ url: ${JSON.stringify(stack().url)} }) });`,
  ];
  const file = join(dir, "durable-client.ts");
  writeFileSync(file, `${prelude.join("\n")}\n${blocks[0]}`);
  const { stdout } = await run(process.execPath, ["--import", "tsx", file], {
    cwd: projectRoot,
    timeout: 60_000,
  });
  expect(stdout.trim().split("\n")).toEqual(["completed", "1"]);
}, 90_000);
