import type { PoolKindSpec } from "../declarations/pool-kind.ts";
import type { Log } from "../observability/log.ts";
import { childEnvironment } from "./child-environment.ts";
import { ChildGroup } from "./child-group.ts";
import { dieWithParentPrefix } from "./child-program.ts";
import type { ChildSlot } from "./child-slot.ts";
import type { ChildUsers } from "./child-users.ts";
import type { PoolObserver } from "./pool-observer.ts";
import { WarmChild } from "./warm-child.ts";

export interface PoolChildrenOptions {
  /** The kinds the pool serves (not the refused ones). */
  kinds: readonly PoolKindSpec[];
  baseEnv: Readonly<Record<string, string | undefined>>;
  cwd: string;
  childLauncher?: readonly string[];
  /** Children as users of their own (child-users.ts); without them, they run as the pool's user. */
  users?: ChildUsers;
  log: Log;
  observer: PoolObserver;
}

/**
 * The pool's warm children, one ChildGroup per kind, and the batch calls waiting for one of them.
 * A delivery takes a child when its turn comes in the intake; a batch call waits here, first come
 * first served, and is served before the kind's intake line whenever a child frees up.
 */
export class PoolChildren {
  private readonly groups = new Map<string, ChildGroup>();
  private readonly waiters = new Map<string, ((child: WarmChild | undefined) => void)[]>();

  /** Where children run as users of their own; undefined where they run as the pool's. */
  private readonly users: ChildUsers | undefined;

  constructor(private readonly options: PoolChildrenOptions) {
    // Looked up once: every child of this pool is spawned the same way.
    const via = options.childLauncher ?? dieWithParentPrefix(process.platform, options.baseEnv.PATH);
    const users = options.users;
    this.users = users;
    for (const spec of options.kinds) {
      const launch = { kind: spec.name, argv: spec.argv, cwd: spec.cwd ?? options.cwd };
      const spawnChild = (onExit: (child: WarmChild) => void) => {
        if (!users) {
          const env = childEnvironment(options.baseEnv, spec.env);
          return new WarmChild({ ...launch, env, via }, options.log, onExit);
        }
        const user = users.acquire();
        const env = childEnvironment(options.baseEnv, spec.env, user);
        return new WarmChild({ ...launch, env, via: user.via }, options.log, (child) => {
          users.release(user);
          onExit(child);
        });
      };
      this.groups.set(spec.name, new ChildGroup(spec.name, spec, spawnChild));
    }
  }

  /** Each served kind's group. */
  all(): IterableIterator<[string, ChildGroup]> {
    return this.groups.entries();
  }

  stats(kind: string): { busy: number; idle: number } {
    return this.groups.get(kind)?.stats() ?? { busy: 0, idle: 0 };
  }

  /** `receivedAt`: when the job (a batch call's oldest item) was received, for the dispatch latency. */
  slotOf(group: ChildGroup, child: WarmChild, receivedAt: number): ChildSlot {
    return {
      group,
      child,
      observe: (event, job, detail) => this.options.observer.event(event, job, receivedAt, detail),
    };
  }

  /**
   * Waits for one of `kind`'s children (the caller pumps: serveWaiters hands it out); undefined when
   * the pool stops first or doesn't serve the kind.
   */
  async reserve(kind: string, receivedAt: number): Promise<ChildSlot | undefined> {
    const group = this.groups.get(kind);
    if (!group) return undefined;
    const { promise, resolve } = Promise.withResolvers<WarmChild | undefined>();
    const waiting = this.waiters.get(kind) ?? [];
    waiting.push(resolve);
    this.waiters.set(kind, waiting);
    const child = await promise;
    return child && this.slotOf(group, child, receivedAt);
  }

  /** Hands free children of `kind` to the batch calls waiting for them (within soft). */
  serveWaiters(kind: string): void {
    const group = this.groups.get(kind);
    const waiting = this.waiters.get(kind) ?? [];
    while (group && waiting.length > 0) {
      const child = group.take(false);
      if (!child) return;
      waiting.shift()?.(child);
    }
  }

  /** Shutdown: every batch call still waiting gets no child (and gives its items back). */
  cancelWaiters(): void {
    for (const waiting of this.waiters.values()) for (const w of waiting.splice(0)) w(undefined);
  }

  killAll(): void {
    for (const group of this.groups.values()) group.killAll();
  }

  async stopAll(graceMs: number): Promise<void> {
    await Promise.all([...this.groups.values()].map((g) => g.stopAll(graceMs)));
    this.users?.dispose();
  }
}
