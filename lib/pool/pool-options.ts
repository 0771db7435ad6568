import type { Timers } from "../batching/key-batches.ts";
import type { PoolKindSpec } from "../declarations/pool-kind.ts";
import type { QueueDeclaration } from "../declarations/queue-declaration.ts";
import type { ChildUserSettings } from "./child-users.ts";

export interface PoolRunnerOptions {
  kinds: readonly PoolKindSpec[];
  /** The pool-tier queues this process long-polls. */
  queues: readonly QueueDeclaration[];
  /** The pool's own environment; children get only PATH, HOME, LANG, TZ and TMPDIR of it (child-environment.ts). */
  baseEnv: Readonly<Record<string, string | undefined>>;
  /** Where children run unless their kind names a `cwd`. */
  cwd: string;
  /** ReceiveMessage long-poll; 20 s on AWS. */
  waitSeconds?: number;
  /** How long a child gets to exit at EOF before it is killed, at shutdown or cull. */
  childGraceMs?: number;
  /** How often a paused queue is checked again; the pool doesn't receive from it meanwhile. */
  pausedRecheckMs?: number;
  /** How long a read of a queue's pause state is trusted (5 s, like the worker's). */
  queueStateTtlMs?: number;
  /**
   * The argv prefix children are spawned through. By default `setpriv --pdeathsig KILL --` where
   * Linux has it, so every child dies with the pool even when the pool is SIGKILLed (child-program.ts).
   */
  childLauncher?: readonly string[];
  /**
   * Children as users of their own, with no capabilities (child-users.ts): the Fargate task requires
   * it, `npm start` prefers it. Without it (tests that share files with their children), children
   * run as the pool's own user.
   */
  childUsers?: ChildUserSettings;
  /** The batch kinds' wait timers (maxWaitSeconds); real ones by default, a manual clock in tests. */
  timers?: Timers;
}

/**
 * The pool process's exit code for a configuration it can't use at all, such as a bad pool file
 * (sysexits' EX_CONFIG): a supervisor that restarts a pool that died doesn't restart this one, since
 * a restart can't fix it. (A kind whose program is missing is refused alone; the pool runs on.)
 */
export const POOL_BAD_CONFIG_EXIT_CODE = 78;

export interface DrainReport {
  /** Runs that finished inside the deadline. */
  finished: number;
  /** Runs stopped at the deadline and handed back (lease released, visibility 0). */
  handedBack: number;
  /** Received but not yet started: made visible again at once. */
  returned: number;
}
