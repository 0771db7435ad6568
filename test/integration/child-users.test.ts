import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { silentLog } from "../../lib/observability/log.ts";
import { ChildUsers, childUsersFor, DEFAULT_CHILD_UIDS } from "../../lib/pool/child-users.ts";
import { waitFor } from "../support/wait.ts";

/** The users and homes a pool gives its children (as root here), with real setpriv and find. */
const dir = mkdtempSync(join(tmpdir(), "skyforge-child-users-"));
// A child reaches its home through this folder, as through /tmp.
chmodSync(dir, 0o755);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("ChildUsers: a child's user and home", () => {
  it("hands out distinct free uids with a 0700 home each, and empties and removes a home once its child is gone", async () => {
    const users = new ChildUsers(
      { separate: "required", ...DEFAULT_CHILD_UIDS, homeParent: dir },
      "/usr/bin/setpriv",
      "/usr/bin:/bin",
      silentLog,
    );
    try {
      const a = users.acquire();
      const b = users.acquire();
      expect(a.uid).not.toBe(b.uid);
      expect((statSync(users.homes).mode & 0o777).toString(8)).toBe("711");
      for (const u of [a, b]) {
        const st = statSync(u.home);
        expect([st.uid, st.gid, (st.mode & 0o777).toString(8)]).toEqual([u.uid, u.uid, "700"]);
      }
      // What a child leaves behind: files and folders of its own, which only its user may delete
      // where the pool lacks DAC_OVERRIDE (the task).
      mkdirSync(join(a.home, "cache"), { mode: 0o700 });
      writeFileSync(join(a.home, "cache/f"), "x");
      for (const p of [join(a.home, "cache"), join(a.home, "cache/f")]) chownSync(p, a.uid, a.uid);
      users.release(a);
      await waitFor(async () => !existsSync(a.home), "the released home to be removed", 10_000);
      expect(existsSync(b.home)).toBe(true);
    } finally {
      users.dispose();
    }
    expect(existsSync(users.homes)).toBe(false);
  });

  it("are refused where the homes' folder is one other users can't search", () => {
    const closed = mkdtempSync(join(dir, "closed-"));
    const settings = { separate: "required" as const, ...DEFAULT_CHILD_UIDS, homeParent: closed };
    expect(() => childUsersFor(settings, "/usr/bin:/bin", silentLog)).toThrow(
      `the pool must run its children as users of their own and can't: the children's homes would be under ${closed}, which other users can't search`,
    );
  });
});
