import type { PoolKindSpec } from "../declarations/pool-kind.ts";
import type { Log } from "../observability/log.ts";
import { childEnvironment } from "./child-environment.ts";
import { dieWithParentPrefix } from "./child-program.ts";
import type { ChildUsers } from "./child-users.ts";
import { KindChildren } from "./kind-children.ts";
import type { PoolObserver } from "./pool-observer.ts";
import type { ReservedChild } from "./reserved-child.ts";
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
  /** How long a child gets to exit at EOF before it is killed, at shutdown. */
  graceMs: number;
}

/**
 * The pool's warm children, one KindChildren per kind, and the batch calls waiting for one of them.
 * A delivery takes a child when its turn comes in the intake; a batch call waits here, first come
 * first served, and is served before the kind's intake line whenever a child frees up.
 */
export class PoolChildren {
  private readonly byKind = new Map<string, KindChildren>();
  private readonly waiters = new Map<string, ((child: WarmChild | undefined) => void)[]>();

  /** Where children run as users of their own; undefined where they run as the pool's. */
  private readonly users: ChildUsers | undefined;

  private readonly options: PoolChildrenOptions;

  constructor(options: PoolChildrenOptions) {
    this.options = options;
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
      this.byKind.set(spec.name, new KindChildren(spec.name, spec, spawnChild));
    }
  }

  /** Each served kind's children. */
  all(): IterableIterator<[string, KindChildren]> {
    return this.byKind.entries();
  }

  stats(kind: string): { busy: number; idle: number } {
    return this.byKind.get(kind)?.stats() ?? { busy: 0, idle: 0 };
  }

  /** Reports every kind's busy and idle children, and their respawns, to the observer. */
  report(): void {
    for (const of of this.byKind.values()) this.options.observer.children(of);
  }

  /** `receivedAt`: when the job (a batch call's oldest item) was received, for the dispatch latency. */
  reservation(children: KindChildren, child: WarmChild, receivedAt: number): ReservedChild {
    return {
      children,
      child,
      observe: (event, job, detail) => this.options.observer.event(event, job, receivedAt, detail),
    };
  }

  /**
   * Waits for one of `kind`'s children (the caller pumps: serveWaiters hands it out); undefined when
   * the pool stops first or doesn't serve the kind.
   */
  async reserve(kind: string, receivedAt: number): Promise<ReservedChild | undefined> {
    const children = this.byKind.get(kind);
    if (!children) return undefined;
    const { promise, resolve } = Promise.withResolvers<WarmChild | undefined>();
    const waiting = this.waiters.get(kind) ?? [];
    waiting.push(resolve);
    this.waiters.set(kind, waiting);
    const child = await promise;
    return child && this.reservation(children, child, receivedAt);
  }

  /** Hands free children of `kind` to the batch calls waiting for them (within soft). */
  serveWaiters(kind: string): void {
    const children = this.byKind.get(kind);
    const waiting = this.waiters.get(kind) ?? [];
    while (children && waiting.length > 0) {
      const child = children.take(false);
      if (!child) return;
      waiting.shift()?.(child);
    }
  }

  /** Shutdown: every batch call still waiting gets no child (and gives its items back). */
  cancelWaiters(): void {
    for (const waiting of this.waiters.values()) for (const w of waiting.splice(0)) w(undefined);
  }

  killAll(): void {
    for (const children of this.byKind.values()) children.killAll();
  }

  /** Stops every child (EOF, then a kill after the grace) and removes the children's homes. */
  async stopAll(): Promise<void> {
    await Promise.all([...this.byKind.values()].map((c) => c.stopAll(this.options.graceMs)));
    this.users?.dispose();
  }
}
