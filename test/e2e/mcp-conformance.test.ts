import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { app } from "../../app/index.ts";
import { docBlocks } from "../support/doc-blocks.ts";
import { projectRoot } from "../support/project-copy.ts";
import { localStackForFile } from "../support/stack-for-file.ts";

/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`, server mode) against the
 * /mcp of the stack `npm start` runs (local/stack.ts over app/, started in this process), for the
 * scenarios docs/guide/mcp.md lists as applying; the guide names every other server scenario of the
 * suite with why it doesn't apply.
 */
const GUIDE = "docs/guide/mcp.md";
const suite = join(projectRoot, "node_modules/@modelcontextprotocol/conformance/dist/index.js");
const run = promisify(execFile);

function guideScenarios(): string[] {
  const block = docBlocks(GUIDE).find((b) =>
    b.marker?.startsWith("checked by test/e2e/mcp-conformance.test.ts"),
  );
  return (block?.text ?? "").split("\n").filter(Boolean);
}

const stack = localStackForFile({ app });
const out = mkdtempSync(join(tmpdir(), "skyforge-mcp-conformance-"));
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe("the MCP conformance suite against /mcp", { timeout: 60_000 }, () => {
  it("names every server scenario in the guide: run, or said why not", async () => {
    const { stdout } = await run(process.execPath, [suite, "list", "--server"]);
    const scenarios = [...stdout.matchAll(/^\s+- (\S+) \[/gm)].map((m) => m[1] as string);
    expect(scenarios.length).toBeGreaterThan(10);
    const guide = readFileSync(join(projectRoot, GUIDE), "utf8");
    const conformance = guide.slice(guide.indexOf("## Conformance"));
    const applied = guideScenarios();
    expect(applied.length).toBeGreaterThan(0);
    for (const name of scenarios) {
      expect(applied.includes(name) || conformance.includes(`\`${name}\``), `${name} is in ${GUIDE}`).toBe(
        true,
      );
    }
    expect(scenarios).toEqual(expect.arrayContaining(applied));
  });

  it.each(guideScenarios())("%s passes", async (scenario) => {
    const dir = join(out, scenario);
    // The suite exits 1 when a check failed; its checks are read either way, to show which.
    const result = await run(process.execPath, [
      suite,
      "server",
      "--url",
      `${stack().url}/mcp`,
      "--scenario",
      scenario,
      "-o",
      dir,
    ]).catch((err: { code: number; stdout: string }) => err);
    const [folder] = readdirSync(dir);
    const checks = JSON.parse(readFileSync(join(dir, folder as string, "checks.json"), "utf8")) as {
      id: string;
      status: string;
      errorMessage?: string;
    }[];
    const failed = checks.filter((c) => c.status === "FAILURE" || c.status === "WARNING");
    expect(failed, JSON.stringify(failed, null, 2)).toEqual([]);
    expect(checks.filter((c) => c.status === "SUCCESS").length).toBeGreaterThan(0);
    expect("code" in result ? result.code : 0).toBe(0);
  });
});
