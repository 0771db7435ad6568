import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterAll, describe, expect, it } from "vitest";
import { startSqsEmulator } from "../../local/emulator-servers.ts";
import * as sqliteSync from "../../local/fauxqs-sqlite-sync.ts";

const dir = mkdtempSync(join(tmpdir(), "skyforge-fauxqs-sync-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("fauxqs's SQLite store without an fsync a commit", () => {
  it("switches the connection fauxqs opens, and only while fauxqs starts", async () => {
    const before = sqliteSync.sqliteConnectionsSynchronousNormal;
    const sqs = await startSqsEmulator({ dataDir: join(dir, "sqs") });
    try {
      // Should fauxqs stop opening its database with the WAL pragma, this fails rather than
      // the stack silently going back to an fsync a commit.
      expect(sqliteSync.sqliteConnectionsSynchronousNormal).toBe(before + 1);
      const other = new DatabaseSync(join(dir, "other.db"));
      other.exec("PRAGMA journal_mode = WAL");
      expect((other.prepare("PRAGMA synchronous").get() as { synchronous: number }).synchronous).toBe(2);
      other.close();
      expect(sqliteSync.sqliteConnectionsSynchronousNormal).toBe(before + 1);
    } finally {
      await sqs.stop();
    }
  });

  it("sets NORMAL on the connection it switches", async () => {
    const db = await sqliteSync.withSynchronousNormal(async () => {
      const opened = new DatabaseSync(join(dir, "switched.db"));
      opened.exec("PRAGMA journal_mode = WAL");
      return opened;
    });
    // 1 = NORMAL (2 = FULL, SQLite's default).
    expect((db.prepare("PRAGMA synchronous").get() as { synchronous: number }).synchronous).toBe(1);
    db.close();
  });
});
