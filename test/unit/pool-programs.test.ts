import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { PoolKindSpec } from "../../lib/declarations/pool-kind.ts";
import { dieWithParentPrefix, findProgram, unlaunchableKinds } from "../../lib/pool/child-program.ts";
import { DEFAULT_RESTART, restartDelayMs } from "../../local/pool-process.ts";

const dir = mkdtempSync(join(tmpdir(), "pool-programs-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A file in the scratch dir; executable unless told otherwise. */
function file(path: string, executable = true): string {
  const full = join(dir, path);
  mkdirSync(dirname(full), { recursive: true });
  writeFileSync(full, "#!/bin/sh\n");
  chmodSync(full, executable ? 0o755 : 0o644);
  return full;
}

const nodeDir = dirname(process.execPath);
const kind = (name: string, argv: string[], over: Partial<PoolKindSpec> = {}): PoolKindSpec => ({
  name,
  argv,
  env: {},
  timeoutSeconds: 60,
  soft: 1,
  hard: 1,
  queue: "heavy",
  maxAttempts: 3,
  ...over,
});

describe("findProgram: where spawning would find a child's program", () => {
  it("looks a bare name up on PATH, and a name with a slash up relative to the cwd", () => {
    const tool = file("bin/tool");
    file("app/run.sh");
    expect(findProgram("tool", { cwd: "/", path: `/nonexistent:${join(dir, "bin")}` })).toBe(tool);
    expect(findProgram("tool", { cwd: join(dir, "bin"), path: "/nonexistent" })).toBeUndefined();
    expect(findProgram("./run.sh", { cwd: join(dir, "app"), path: "" })).toBe(join(dir, "app/run.sh"));
    expect(findProgram("app/run.sh", { cwd: dir, path: "" })).toBe(join(dir, "app/run.sh"));
    expect(findProgram(process.execPath, { cwd: "/", path: "" })).toBe(process.execPath);
  });

  it("refuses what can't be executed: a plain file, a directory, nothing at all", () => {
    file("bin/notes.txt", false);
    expect(findProgram("notes.txt", { cwd: "/", path: join(dir, "bin") })).toBeUndefined();
    expect(findProgram("bin", { cwd: "/", path: dir })).toBeUndefined();
    expect(findProgram("skyforge-no-such-program", { cwd: "/", path: undefined })).toBeUndefined();
  });
});

describe("unlaunchableKinds: the kinds a pool refuses at start", () => {
  it("names each kind whose program is missing, and the program", () => {
    const refused = unlaunchableKinds(
      [
        kind("node-ok", ["node", "x.mjs"]),
        kind("rb-size", ["ruby", "children/size.rb"]),
        kind("local-tool", ["./tool.sh"], { cwd: "app" }),
        kind("own-path", ["tool"], { env: { PATH: join(dir, "bin") } }),
        kind("empty", []),
      ],
      { PATH: nodeDir },
      dir,
    );
    expect([...refused.keys()]).toEqual(["rb-size", "local-tool", "empty"]);
    expect(refused.get("rb-size")).toBe(
      'pool kind "rb-size": its program "ruby" was not found on PATH (or is not executable)',
    );
    expect(refused.get("local-tool")).toBe(
      `pool kind "local-tool": its program "./tool.sh" was not found relative to ${join(dir, "app")} (or is not executable)`,
    );
  });
});

describe("dieWithParentPrefix: children die with the pool where Linux has setpriv", () => {
  it("spawns through setpriv's parent-death signal when it is on PATH, on Linux only", () => {
    const setpriv = file("util-linux/setpriv");
    const path = join(dir, "util-linux");
    expect(dieWithParentPrefix("linux", path)).toEqual([setpriv, "--pdeathsig", "KILL", "--"]);
    expect(dieWithParentPrefix("linux", "/nonexistent")).toEqual([]);
    expect(dieWithParentPrefix("darwin", path)).toEqual([]);
  });
});

describe("the local pool's restart backoff", () => {
  it("starts at 1 s and doubles up to 30 s", () => {
    expect([1, 2, 3, 4, 5, 6, 7, 20].map((n) => restartDelayMs(n))).toEqual([
      1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000,
    ]);
    expect(DEFAULT_RESTART.stableMs).toBe(60_000);
  });
});
