import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openDataDir } from "../../local/data-dir.ts";

/**
 * The local data directory holds every job's payload and result (dynalite's and fauxqs's stores):
 * only its owner may enter it, whether openDataDir makes it or finds it already there.
 */

const scratch = mkdtempSync(join(tmpdir(), "skyforge-datadir-mode-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const modeOf = (path: string) => statSync(path).mode & 0o777;

describe("openDataDir", () => {
  it("creates the directory and its stores readable by their owner alone, whatever the umask", async () => {
    const root = join(scratch, "new", ".skyforge");
    const before = process.umask(0o000);
    try {
      const dir = await openDataDir(root);
      dir.release();
      expect(modeOf(root)).toBe(0o700);
      expect(modeOf(dir.sqs)).toBe(0o700);
    } finally {
      process.umask(before);
    }
  });

  it("makes an existing world-readable directory private again", async () => {
    const root = join(scratch, "old");
    mkdirSync(join(root, "sqs"), { recursive: true });
    chmodSync(root, 0o755);
    chmodSync(join(root, "sqs"), 0o777);
    const dir = await openDataDir(root);
    dir.release();
    expect(modeOf(root)).toBe(0o700);
    expect(modeOf(join(root, "sqs"))).toBe(0o700);
  });
});
