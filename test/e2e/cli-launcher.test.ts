import { execFile, execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { addKind, copyProject, type ProjectCopy, projectRoot } from "../support/project-copy.ts";

/**
 * The launcher `npx skyforge` runs (bin/skyforge.mjs): npx on the system's Node installs and starts
 * it without npm's engine warning, and it runs the CLI from a bundle it builds once and keeps in
 * `.cache/skyforge-cli/` (bin/cli-bundle.mjs), built again when a file it was built from changes,
 * and skipped for tsx when it can't be kept. How fast it starts is a figure for the report, not a test.
 */
const run = promisify(execFile);
const copies: ProjectCopy[] = [];
afterAll(() => {
  for (const copy of copies) copy.remove();
});

const shoutKind = `import * as z from "zod";
import { defineKind } from "../define.ts";

export const shout = defineKind({
  name: "shout",
  payload: z.object({ text: z.string().min(1) }),
  queue: "default",
  maxAttempts: 3,
  timeoutSeconds: 30,
  handler: async ({ text }) => ({ shouted: text.toUpperCase() }),
});
`;

/** `node bin/skyforge.mjs …` in a copy of the project, as npx runs it there. */
const skyforge = (copy: ProjectCopy, args: readonly string[]) =>
  run(process.execPath, [join(copy.dir, "bin/skyforge.mjs"), ...args], { cwd: copy.dir, timeout: 60_000 });

/** The bundle's identity on disk: a rebuild replaces the file (a rename), so its inode changes. */
const identity = (file: string) => {
  const s = statSync(file);
  return `${s.ino}:${s.mtimeMs}:${s.size}`;
};

/** The packages a start of `file` loads: its static imports, and those of the chunks it imports so. */
function staticImports(file: string, seen = new Set<string>()): string[] {
  seen.add(file);
  const specifiers = [...readFileSync(file, "utf8").matchAll(/^import\s[^;]*?from\s*"([^"]+)";$/gm)].map(
    (m) => m[1] as string,
  );
  return specifiers.flatMap((specifier) => {
    if (!specifier.startsWith("./")) return [specifier];
    const chunk = join(dirname(file), specifier);
    return seen.has(chunk) ? [] : staticImports(chunk, seen);
  });
}

describe("the skyforge launcher", { timeout: 120_000 }, () => {
  it("builds the CLI once and runs the bundle after; an edited file it was built from is built again, an edited kind is read as it is", async () => {
    const copy = copyProject("skyforge-launcher-");
    copies.push(copy);
    const bundle = join(copy.dir, ".cache/skyforge-cli/main.mjs");
    expect(existsSync(bundle)).toBe(false);

    const before = await skyforge(copy, ["types"]);
    expect(before.stdout).toContain("export interface SkyforgeApp {");
    expect(before.stdout).not.toContain("shout");
    expect(existsSync(bundle)).toBe(true);
    const built = identity(bundle);

    // Nothing changed: the same bundle, not built again.
    expect((await skyforge(copy, ["--version"])).stdout).toMatch(/^\d+\.\d+\.\d+ \(node v24\./);
    expect(identity(bundle)).toBe(built);
    // Split: what only some commands need (the MCP server, the realtime client, esbuild) is in
    // chunks of its own, so a start loads none of their packages.
    const loaded = staticImports(bundle);
    expect(loaded).toContain("commander");
    expect(loaded.filter((p) => /^(mqtt|esbuild|@modelcontextprotocol\/)/.test(p))).toEqual([]);

    // A new kind (app/index.ts edited, app/kinds/shout.ts added): `types` loads the app as it is now
    // (project/app-module.ts), which the CLI's bundle doesn't hold, so the bundle stays.
    addKind(copy, "shout.ts", "shout", shoutKind);
    const after = await skyforge(copy, ["types"]);
    expect(after.stdout).toMatch(/\n {4}shout: ShoutPayload;\n/);
    expect(identity(bundle)).toBe(built);

    // A file the CLI was built from, edited: built again, and the edit runs.
    const program = join(copy.dir, "cli/program.ts");
    writeFileSync(
      program,
      readFileSync(program, "utf8").replace('"Operate skyforge: ', '"(edited) Operate skyforge: '),
    );
    expect((await skyforge(copy, ["--help"])).stdout).toContain("(edited)");
    expect(identity(bundle)).not.toBe(built);

    // A chunk gone (a partial clean of .cache): built again, not a failed import later.
    const chunks = readdirSync(dirname(bundle)).filter((name) => name.startsWith("chunk-"));
    expect(chunks.length).toBeGreaterThan(0);
    rmSync(join(dirname(bundle), chunks[0] as string));
    const rebuilt = identity(bundle);
    expect((await skyforge(copy, ["--version"])).stdout).toMatch(/^\d+\.\d+\.\d+ /);
    expect(identity(bundle)).not.toBe(rebuilt);
    expect(existsSync(join(dirname(bundle), chunks[0] as string))).toBe(true);
  });

  it("runs the sources through tsx when no bundle can be kept (here .cache is a file)", async () => {
    const copy = copyProject("skyforge-launcher-");
    copies.push(copy);
    writeFileSync(join(copy.dir, ".cache"), "not a folder");
    const version = await skyforge(copy, ["--version"]);
    expect(version.stdout).toMatch(/^\d+\.\d+\.\d+ \(node v24\./);
    expect(version.stderr).toBe("");
  });

  /** The system's own Node and npx, when that Node is older than the project's 24: what npx runs bins with. */
  const systemBin = ["/usr/bin", "/usr/local/bin"].find(
    (dir) =>
      existsSync(join(dir, "node")) &&
      existsSync(join(dir, "npx")) &&
      Number(execFileSync(join(dir, "node"), ["-p", "process.versions.node.split('.')[0]"]).toString()) < 24,
  );
  it.skipIf(systemBin === undefined)(
    "npx on an older system Node installs the project's bin and runs it on Node 24, with no engine warning",
    async () => {
      // A cache of its own: npx installs the project into it on first use, where npm checks engines.
      const cache = mkdtempSync(join(tmpdir(), "skyforge-npx-cache-"));
      try {
        const { stdout, stderr } = await run(join(systemBin as string, "npx"), ["skyforge", "--version"], {
          cwd: projectRoot,
          env: {
            ...process.env,
            PATH: `${systemBin}:${process.env.PATH}`,
            npm_config_cache: cache,
            npm_config_offline: "true",
            npm_config_update_notifier: "false",
          },
          timeout: 60_000,
        });
        expect(stdout).toMatch(/^\d+\.\d+\.\d+ \(node v24\./);
        expect(stderr).not.toContain("EBADENGINE");
        expect(stderr).toBe("");
      } finally {
        rmSync(cache, { recursive: true, force: true });
      }
    },
  );
});
