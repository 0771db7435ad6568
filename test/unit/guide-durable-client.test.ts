import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { codeBlocks } from "../support/doc-blocks.ts";
import { projectRoot } from "../support/project-copy.ts";
import { compileTypoFixture } from "../support/typo-fixture.ts";

/**
 * docs/guide/enqueue.md's durable-jobs block of the typed client ("The typed client") type-checks against the
 * app and the client as they are, with `jobs` as the guide's block above it makes it. The block itself
 * runs against the local stack in test/e2e/guide-durable-client.test.ts, and its calls through both
 * transports in test/e2e/client.test.ts.
 */
const dir = mkdtempSync(join(tmpdir(), "skyforge-readme-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it("docs/guide/enqueue.md's durable client block compiles", () => {
  const blocks = codeBlocks("docs/guide/enqueue.md", "ts").filter((b) => b.startsWith("// Durable jobs"));
  expect(blocks).toHaveLength(1);
  // A module, as the project's files are (its package.json says so).
  writeFileSync(join(dir, "package.json"), '{ "type": "module" }');
  const file = join(dir, "readme-durable.ts");
  const prelude = [
    `import { app } from "${join(projectRoot, "app/index.ts")}";`,
    `import { createClient } from "${join(projectRoot, "client/create-client.ts")}";`,
    `import type { Transport } from "${join(projectRoot, "client/transport.ts")}";`,
    "declare const transport: Transport;",
    "const jobs = createClient({ app, transport });",
    "export {};",
  ];
  writeFileSync(file, `${prelude.join("\n")}\n${blocks[0]}`);
  const { failing } = compileTypoFixture(file);
  expect([...failing.entries()]).toEqual([]);
}, 60_000);
