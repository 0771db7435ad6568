import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runInstalling } from "../support/outside-project.ts";

/**
 * The outside-project tests' install runner (test/support/outside-project.ts): npm's "no matching
 * version" from a stale cached document is run again, asking the registry first; nothing else is.
 * A bash script stands in for the guide's block and logs each run's npm settings.
 */
describe("runInstalling", () => {
  let dir: string;
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const script = (log: string, failure: string) =>
    [
      `echo "offline=\${npm_config_prefer_offline:-} online=\${npm_config_prefer_online:-}" >> ${log}`,
      `if [ -z "\${npm_config_prefer_online:-}" ]; then echo "${failure}" >&2; exit 1; fi`,
      "echo installed",
    ].join("\n");
  const env = () => ({ PATH: process.env.PATH, npm_config_prefer_offline: "true" });

  it("runs a block refused with ETARGET once more, the registry first", async () => {
    dir = mkdtempSync(join(tmpdir(), "install-retry-"));
    const log = join(dir, "runs.log");
    const block = script(log, "npm error code ETARGET");
    const out = await runInstalling("bash", ["-c", block], { cwd: dir, env: env(), timeout: 10_000 });
    expect(out.stdout.trim()).toBe("installed");
    expect(readFileSync(log, "utf8").trim().split("\n")).toEqual([
      "offline=true online=",
      "offline= online=true",
    ]);
  });

  it("fails at once on any other error", async () => {
    dir = mkdtempSync(join(tmpdir(), "install-retry-"));
    const log = join(dir, "runs.log");
    const block = script(log, "npm error code E404");
    await expect(
      runInstalling("bash", ["-c", block], { cwd: dir, env: env(), timeout: 10_000 }),
    ).rejects.toMatchObject({ stderr: expect.stringContaining("E404") });
    expect(readFileSync(log, "utf8").trim().split("\n")).toEqual(["offline=true online="]);
  });
});
