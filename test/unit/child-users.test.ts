import { chmodSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { asChildUserPrefix } from "../../lib/pool/child-program.ts";
import { DEFAULT_CHILD_UIDS, searchablePath, switchRefusal, uidsInUse } from "../../lib/pool/child-users.ts";

/** A /proc/self/status as far as switchRefusal reads it. */
const status = (uid: number, capEff: string) =>
  `Name:\tnode\nUid:\t${uid}\t${uid}\t${uid}\t${uid}\nCapEff:\t${capEff}\n`;
/** Docker's default set (CapEff 00000000a80425fb) and the pool task's (CHOWN, KILL, SETGID, SETUID, SETPCAP). */
const DOCKER_DEFAULT = "00000000a80425fb";
const POOL_TASK = "00000000000001e1";
const WHOLE_MAP = "         0          0 4294967295\n";
const check = (over: Partial<Parameters<typeof switchRefusal>[0]> = {}) =>
  switchRefusal({
    setpriv: "/usr/bin/setpriv",
    status: status(0, POOL_TASK),
    uidMap: WHOLE_MAP,
    ...DEFAULT_CHILD_UIDS,
    ...over,
  });

describe("switchRefusal: whether the pool can start children as users of their own", () => {
  it("can as root with the task's five capabilities, or Docker's default set", () => {
    expect(check()).toBeUndefined();
    expect(check({ status: status(0, DOCKER_DEFAULT) })).toBeUndefined();
  });

  it("names every capability it lacks, and the uid it runs as", () => {
    expect(check({ status: status(1000, "0000000000000000") })).toBe(
      "the pool (uid 1000) lacks CAP_CHOWN, CAP_KILL, CAP_SETGID, CAP_SETUID, CAP_SETPCAP",
    );
    // Root without CAP_KILL couldn't stop a child that runs as another uid.
    expect(check({ status: status(0, "00000000000001c1") })).toBe("the pool (uid 0) lacks CAP_KILL");
  });

  it("refuses without setpriv, with a range holding root or its own uid, or a range its namespace doesn't map", () => {
    expect(check({ setpriv: undefined })).toBe("setpriv (util-linux) is not on the pool's PATH");
    expect(check({ firstUid: 0, uidCount: 10 })).toMatch(/uids 0\.\.9 include the pool's own/);
    expect(check({ status: status(1000, DOCKER_DEFAULT), firstUid: 900, uidCount: 200 })).toMatch(
      /include the pool's own/,
    );
    // A rootless container maps 65536 uids: the default range is outside it.
    expect(check({ uidMap: "0 100000 65536\n" })).toMatch(/are not mapped in the pool's user namespace/);
    expect(check({ uidMap: "0 100000 65536\n", firstUid: 20_000, uidCount: 1000 })).toBeUndefined();
  });
});

describe("uidsInUse", () => {
  it("holds the uid this test runs as", () => {
    expect(uidsInUse().has(process.getuid?.() ?? -1)).toBe(true);
  });
});

describe("asChildUserPrefix", () => {
  it("switches uid and gid, drops groups and every capability, forbids new privileges, keeps the parent-death signal", () => {
    expect(asChildUserPrefix("/usr/bin/setpriv", 1879048199)).toEqual([
      "/usr/bin/setpriv",
      "--reuid=1879048199",
      "--regid=1879048199",
      "--clear-groups",
      "--no-new-privs",
      "--inh-caps=-all",
      "--bounding-set=-all",
      "--pdeathsig",
      "KILL",
      "--",
    ]);
  });
});

describe("searchablePath: the PATH a child's user gets", () => {
  const dir = mkdtempSync(join(tmpdir(), "child-path-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("keeps the directories any user may search, in order, and drops private and relative ones", () => {
    const open = join(dir, "open/bin");
    const closed = join(dir, "closed/bin");
    mkdirSync(open, { recursive: true });
    mkdirSync(closed, { recursive: true });
    chmodSync(dir, 0o755);
    chmodSync(join(dir, "open"), 0o755);
    chmodSync(open, 0o755);
    // Like /root: a private directory above a searchable one (root's ~/.pyenv/shims).
    chmodSync(join(dir, "closed"), 0o700);
    chmodSync(closed, 0o755);
    expect(searchablePath(`${closed}:${open}:node_modules/.bin:/usr/bin:${join(dir, "missing")}`)).toBe(
      `${open}:/usr/bin`,
    );
    expect(searchablePath(undefined)).toBeUndefined();
  });
});
