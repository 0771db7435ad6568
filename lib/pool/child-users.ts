import { spawn } from "node:child_process";
import { randomInt } from "node:crypto";
import {
  chmodSync,
  chownSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmdirSync,
  rmSync,
  statSync,
} from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { ConfigError } from "../errors.ts";
import { errorFields, type Log } from "../observability/log.ts";
import { asChildUserPrefix, findSetpriv } from "./child-program.ts";

/**
 * Children run as users of their own: a uid no other process has (not the pool's, not a sibling's),
 * so the kernel refuses them the pool's /proc/<pid>/environ (the task's credentials) and every other
 * process's /proc/<pid>/mem (another job's payload). Numeric uids need no passwd entry.
 */
export interface ChildUserSettings {
  /**
   * "required" (the Fargate task): the pool never runs a child as its own user, and refuses to
   * start (a ConfigError, exit 78) where it can't switch. "preferred" (npm start): it switches where
   * the host lets it, and otherwise says once why not and runs its children as itself.
   */
  separate: "required" | "preferred";
  /** The uids children get: a random one in [firstUid, firstUid + uidCount) that no process holds. */
  firstUid: number;
  uidCount: number;
  /** Where the pool makes a directory (its own, per process) of its children's homes. */
  homeParent: string;
}

/**
 * 2^24 uids from 0x70000000: far above login users (1000–60000), nobody, systemd's dynamic users
 * and the container ranges /etc/subuid hands out (100000 up), so a child shares its uid with no
 * process of the host; and wide, so two pools on one machine (tests, a second `npm start`) picking
 * at the same moment almost never pick the same one. A uid some process holds is never picked.
 */
export const DEFAULT_CHILD_UIDS = { firstUid: 0x7000_0000, uidCount: 1 << 24 } as const;

/**
 * What the pool needs to start children as other users, by capability number: SETUID and SETGID
 * to switch, SETPCAP to empty the child's bounding set, KILL to signal a child that is no longer
 * its uid (timeouts, cancels, shutdown), CHOWN to give each child its home. Nothing else: the
 * task definition drops every other capability Docker grants (lib/deploy-plan/pool-capabilities.ts).
 */
export const CHILD_SWITCH_CAPABILITIES = { CHOWN: 0, KILL: 5, SETGID: 6, SETUID: 7, SETPCAP: 8 } as const;

export interface SwitchCheck {
  setpriv: string | undefined;
  /** /proc/self/status and /proc/self/uid_map of the pool. */
  status: string;
  uidMap: string;
  firstUid: number;
  uidCount: number;
}

/** Why this process can't start children as other users; undefined when it can. */
export function switchRefusal(c: SwitchCheck): string | undefined {
  if (!c.setpriv) return "setpriv (util-linux) is not on the pool's PATH";
  const uid = Number(/^Uid:\s+(\d+)/m.exec(c.status)?.[1]);
  const effective = BigInt(`0x${/^CapEff:\s+([0-9a-f]+)/m.exec(c.status)?.[1] ?? "0"}`);
  const missing = Object.entries(CHILD_SWITCH_CAPABILITIES)
    .filter(([, bit]) => (effective & (1n << BigInt(bit))) === 0n)
    .map(([name]) => `CAP_${name}`);
  if (missing.length > 0) return `the pool (uid ${uid}) lacks ${missing.join(", ")}`;
  const last = c.firstUid + c.uidCount - 1;
  if (c.firstUid <= uid && uid <= last)
    return `the children's uids ${c.firstUid}..${last} include the pool's own`;
  if (c.firstUid <= 0) return `the children's uids ${c.firstUid}..${last} include root`;
  const mapped = c.uidMap
    .trim()
    .split("\n")
    .map((line) => line.trim().split(/\s+/).map(Number))
    .some(([inside = -1, , count = 0]) => inside <= c.firstUid && last < inside + count);
  if (!mapped)
    return `the children's uids ${c.firstUid}..${last} are not mapped in the pool's user namespace`;
  return undefined;
}

/** Every uid (real, effective, saved, filesystem) some process on this machine holds now. */
export function uidsInUse(proc = "/proc"): Set<number> {
  const uids = new Set<number>();
  for (const name of readdirSync(proc)) {
    if (!/^\d+$/.test(name)) continue;
    let status: string;
    try {
      status = readFileSync(join(proc, name, "status"), "utf8");
    } catch {
      continue; // gone meanwhile
    }
    const ids = /^Uid:\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)/m.exec(status);
    for (const id of ids?.slice(1) ?? []) uids.add(Number(id));
  }
  return uids;
}

/** Whether any user may search `dir` and every directory above it (others' execute bit, no ACLs read). */
function othersCanSearch(dir: string): boolean {
  try {
    for (let d = realpathSync(dir); ; d = dirname(d)) {
      const st = statSync(d);
      if (!st.isDirectory() || (st.mode & 0o001) === 0) return false;
      if (d === dirname(d)) return true;
    }
  } catch {
    return false;
  }
}

/**
 * The pool's PATH without the directories a child's user can't search (root's ~/.pyenv/shims, say).
 * setpriv still holds the pool's rights when it looks the program up, so it would find a program
 * there that the child then can't run (a shim that re-reads itself): the child must find the one it can.
 */
export function searchablePath(path: string | undefined): string | undefined {
  return path
    ?.split(delimiter)
    .filter((dir) => dir.startsWith("/") && othersCanSearch(dir))
    .join(delimiter);
}

/** One child's user: its uid (and gid), its home, its PATH, the argv prefix that starts a program as it. */
export interface ChildUser {
  uid: number;
  home: string;
  path: string | undefined;
  via: string[];
}

/** How many random picks may land on a uid in use before acquire gives up (never, in practice). */
const PICKS = 64;

/** The users this pool's children run as, and their homes. */
export class ChildUsers {
  /** Held by a child of this pool: never handed out twice, even before its process exists. */
  private readonly held = new Set<number>();
  /** Mode 0711: a child reaches its own home by path, and can list no one's. */
  readonly homes: string;
  /** The PATH every child gets: the pool's, searchable by any user. */
  readonly path: string | undefined;

  private readonly settings: ChildUserSettings;
  private readonly setpriv: string;
  private readonly log: Log;

  constructor(settings: ChildUserSettings, setpriv: string, poolPath: string | undefined, log: Log) {
    this.settings = settings;
    this.setpriv = setpriv;
    this.log = log;
    this.path = searchablePath(poolPath);
    this.homes = mkdtempSync(join(settings.homeParent, "skyforge-children-"));
    chmodSync(this.homes, 0o711);
  }

  /** A uid no process holds, and a fresh home only it can use (0700, its own). */
  acquire(): ChildUser {
    const busy = uidsInUse();
    for (let pick = 0; pick < PICKS; pick++) {
      const uid = this.settings.firstUid + randomInt(this.settings.uidCount);
      if (this.held.has(uid) || busy.has(uid)) continue;
      this.held.add(uid);
      const home = join(this.homes, String(uid));
      try {
        mkdirSync(home, { mode: 0o700 });
        chownSync(home, uid, uid);
      } catch (err) {
        // Left by an earlier child of the same uid (its cleanup still running): still its own.
        const left = (err as NodeJS.ErrnoException).code === "EEXIST" ? lstatSync(home) : undefined;
        if (!left?.isDirectory() || left.uid !== uid || (left.mode & 0o777) !== 0o700) {
          this.held.delete(uid);
          throw err;
        }
      }
      return { uid, home, path: this.path, via: asChildUserPrefix(this.setpriv, uid) };
    }
    throw new ConfigError(
      `no free uid for a pool child in ${this.settings.firstUid}+${this.settings.uidCount}`,
    );
  }

  /**
   * The child has exited: its uid is free for another (once no process of it is left), and its
   * home is emptied as that uid (the pool holds no right to read or delete another user's files),
   * then removed.
   */
  release(user: ChildUser): void {
    this.held.delete(user.uid);
    const [program, ...args] = [...user.via, "find", user.home, "-mindepth", "1", "-delete"];
    const cleaner = spawn(program as string, args, {
      cwd: "/",
      env: { PATH: "/usr/bin:/bin" },
      stdio: "ignore",
    });
    cleaner.on("error", (err) => this.log.debug("could not clean a child's home", errorFields(err)));
    cleaner.on("exit", () => {
      try {
        rmdirSync(user.home);
      } catch (err) {
        this.log.debug("could not remove a child's home", { home: user.home, ...errorFields(err) });
      }
    });
  }

  /** The pool is stopping: its homes go, as far as it may remove them. */
  dispose(): void {
    try {
      rmSync(this.homes, { recursive: true, force: true });
    } catch {
      // A home a child filled can only be emptied as that child (release); the task's disk goes anyway.
    }
  }
}

/**
 * The child users of a pool starting with these settings: undefined (children run as the pool's
 * own user) where the host can't switch and the settings allow it, said once, here.
 */
export function childUsersFor(
  settings: ChildUserSettings,
  path: string | undefined,
  log: Log,
  read: (file: string) => string = (file) => readFileSync(file, "utf8"),
): ChildUsers | undefined {
  const setpriv = findSetpriv(process.platform, path);
  const refusal =
    process.platform !== "linux"
      ? `${process.platform} has no setpriv`
      : (switchRefusal({
          setpriv,
          status: read("/proc/self/status"),
          uidMap: read("/proc/self/uid_map"),
          firstUid: settings.firstUid,
          uidCount: settings.uidCount,
        }) ??
        (othersCanSearch(settings.homeParent)
          ? undefined
          : `the children's homes would be under ${settings.homeParent}, which other users can't search`));
  if (refusal === undefined && setpriv) return new ChildUsers(settings, setpriv, path, log);
  if (settings.separate === "required") {
    throw new ConfigError(`the pool must run its children as users of their own and can't: ${refusal}`);
  }
  log.warn(
    "pool children run as the pool's own user: they can read its environment and each other's memory",
    {
      why: refusal,
    },
  );
  return undefined;
}
