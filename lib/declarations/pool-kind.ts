import type * as z from "zod";
import type { BatchSettings } from "../job/batch.ts";
import type { DebounceSettings, SingletonSettings } from "../job/coalesce.ts";
import type { FlowDeclaration } from "../job/flow.ts";
import type { OnExhausted } from "../job/kind.ts";

/** A pool kind's payload: any JSON (the child validates it). */
export type JsonValue = z.core.util.JSONType;

/**
 * A pool batch kind (docs/architecture.md §18): its key, computed from the payload at enqueue, and its
 * batching settings. The pool gathers items per key across receives and sends each call's items to
 * one child in one batch request.
 */
export interface PoolBatch extends BatchSettings {
  key(payload: JsonValue): string;
}

/** How the pool runs one heavy kind: the child program, its limits, and the queue it is fed from. */
export interface PoolKindSpec<Name extends string = string, Queue extends string = string> {
  name: Name;
  /** What the kind does, in a sentence: its `enqueue_<kind>` tool's description on the MCP server. */
  description?: string;
  /** Program and arguments of each warm child; relative paths resolve against `cwd`. */
  argv: readonly string[];
  env: Readonly<Record<string, string>>;
  cwd?: string;
  /** A child that has not answered a request by then is killed and the attempt fails. */
  timeoutSeconds: number;
  /** Children started on demand for ordinary work. */
  soft: number;
  /** The ceiling, reached only while critical-priority work waits. */
  hard: number;
  queue: Queue;
  maxAttempts: number;
  /** "pause": a job that used its last attempt waits for an operator instead of ending dead (§21). */
  onExhausted?: OnExhausted;
  /** Makes it a batch kind: many jobs of one key in one request to one child. */
  batch?: PoolBatch;
  /**
   * One run per burst of a key (docs/architecture.md §19). A collect burst reaches the child as one
   * request whose payload is the list of the burst's payloads; it answers a list of as many results.
   */
  debounce?: DebounceSettings<JsonValue>;
  /** At most one running job per key (docs/architecture.md §19). */
  singleton?: SingletonSettings<JsonValue>;
  /**
   * Flow control per key: runs at once and units started per period; one limit or a list of up to 4
   * (docs/architecture.md §20).
   */
  flow?: FlowDeclaration<JsonValue>;
}

export const MAX_CHILDREN_PER_KIND = 64;

/** What a pool kind gets for each field its declaration (or the operator's file) leaves out. */
export const POOL_KIND_DEFAULTS = {
  timeoutSeconds: 300,
  soft: 2,
  hard: 4,
  maxAttempts: 5,
  env: {},
} as const;

/** A pool kind as declared: `name`, `argv` and its pool-tier `queue` are required; the rest has defaults. */
export type PoolKindDeclaration<Name extends string = string, Queue extends string = string> = Pick<
  PoolKindSpec<Name, Queue>,
  "name" | "argv" | "queue"
> &
  Partial<Omit<PoolKindSpec<Name, Queue>, "name" | "argv" | "queue">>;

/** Fills a declaration's defaults in. */
export function poolKindSpec<N extends string, Q extends string>(
  declaration: PoolKindDeclaration<N, Q>,
): PoolKindSpec<N, Q> {
  return { ...POOL_KIND_DEFAULTS, ...declaration } as PoolKindSpec<N, Q>;
}
