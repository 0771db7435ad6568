import { CHILD_SWITCH_CAPABILITIES } from "../pool/child-users.ts";

/**
 * The pool task's privileges. The pool process runs as root (uid 0) so that it may start each child
 * as a user of its own (lib/pool/child-users.ts), but root with only the capabilities that takes:
 * SETUID, SETGID, SETPCAP, KILL and CHOWN. Everything else Docker grants a container by default is
 * dropped in the task definition (Fargate lets a task drop any capability, add none but
 * SYS_PTRACE), so the pool can't bypass file permissions (DAC_OVERRIDE, FOWNER), open raw sockets,
 * make device nodes or set file capabilities. Why not a non-root pool: a helper holding the rights
 * alone would leave the pool unable to signal its children (other uids), so timeouts and cancels
 * couldn't kill them; and a process allowed to switch to any uid (the pool, whatever uid it starts
 * as, given SETUID by file capabilities) can become root in its container anyway, so starting as
 * root with five capabilities grants nothing more. Children keep none of it: setpriv empties every
 * set, and they can't read the pool's memory or environment.
 */

/** What Docker, and so Fargate, gives a container when the task definition says nothing. */
export const DEFAULT_CONTAINER_CAPABILITIES = [
  "AUDIT_WRITE",
  "CHOWN",
  "DAC_OVERRIDE",
  "FOWNER",
  "FSETID",
  "KILL",
  "MKNOD",
  "NET_BIND_SERVICE",
  "NET_RAW",
  "SETFCAP",
  "SETGID",
  "SETPCAP",
  "SETUID",
  "SYS_CHROOT",
] as const;

/** What the pool keeps: exactly what starting children as other users takes. */
export const POOL_CAPABILITIES: readonly string[] = Object.keys(CHILD_SWITCH_CAPABILITIES).sort();

/** What the pool task drops: every default capability it doesn't need. */
export const POOL_DROPPED_CAPABILITIES: readonly string[] = DEFAULT_CONTAINER_CAPABILITIES.filter(
  (c) => !POOL_CAPABILITIES.includes(c),
);

/** One container of an ECS task definition, as far as the pool's privileges go. */
export interface PoolContainerPrivileges {
  user?: string;
  linuxParameters?: { capabilities?: { add?: string[]; drop?: string[] } } & Record<string, unknown>;
}

/**
 * The task definition's containers (ECS's JSON) with the pool's privileges: run as root, every
 * capability it doesn't need dropped, the other Linux parameters (SST's init process) kept.
 */
export function withPoolPrivileges(containerDefinitions: string): string {
  const containers = JSON.parse(containerDefinitions) as PoolContainerPrivileges[];
  return JSON.stringify(
    containers.map((c) => ({
      ...c,
      user: "0",
      linuxParameters: { ...c.linuxParameters, capabilities: { drop: [...POOL_DROPPED_CAPABILITIES] } },
    })),
  );
}
