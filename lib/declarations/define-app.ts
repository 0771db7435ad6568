import type * as z from "zod";
import { type BatchKindInput, type BatchSpec, batchKindDefinition } from "../job/batch.ts";
import { collectKindDefinition } from "../job/collect.ts";
import type { InvokeManyOptions, InvokeOptions } from "../job/durable.ts";
import type { GroupView } from "../job/group-schemas.ts";
import type {
  AnyKind,
  CollectKindInput,
  FollowUpOptions,
  GroupSpec,
  JobContextBase,
  KindDefinition,
  KindInput,
  KindModule,
  LazyKindInput,
} from "../job/kind.ts";
import type { EnqueueRequest, EnqueueResult } from "../job/schemas.ts";
import type {
  AppNames,
  KindName,
  KindPayloads,
  KindResults,
  LambdaQueueName,
  PoolQueueName,
  QueueName,
  ScopeName,
} from "./app-names.ts";
import type { EventDeclaration } from "./event-declaration.ts";
import { type PoolKindDeclaration, type PoolKindSpec, poolKindSpec } from "./pool-kind.ts";
import type { QueueDeclaration } from "./queue-declaration.ts";
import type { RateLimitScope } from "./rate-limit-scope.ts";
import type { ScaleDeclaration } from "./scale.ts";
import type { ScheduleDeclaration } from "./schedule-declaration.ts";
import { assertValidDeclarations } from "./validate-app.ts";

/**
 * Everything a deployer writes, as one value (docs/architecture.md §2). The engine, the functions,
 * infra, the local stack and the benches all read it; lib/ never names what is in it.
 */
export interface App<
  Q extends readonly QueueDeclaration[] = readonly QueueDeclaration[],
  K extends readonly AnyKind[] = readonly AnyKind[],
  P extends readonly PoolKindSpec[] = readonly PoolKindSpec[],
  S extends readonly ScheduleDeclaration[] = readonly ScheduleDeclaration[],
  R extends readonly RateLimitScope[] = readonly RateLimitScope[],
> {
  queues: Q;
  kinds: K;
  poolKinds: P;
  schedules: S;
  rateLimits: R;
  /** The rate the table's layout is built for (docs/guide/scale.md); 1 000 jobs a second when left out. */
  scale?: ScaleDeclaration;
  /** Event names kept longer or shorter than 5 minutes for the waits that begin after them (defineEvent). */
  events?: readonly EventDeclaration[];
}

/**
 * The handler context of an app's kinds: its rate-limit scopes and its kinds' payloads. The payload
 * map is named only inside `enqueue`, so a handler whose result uses `ctx` doesn't make its own
 * kind's type depend on itself.
 */
export interface AppJobContext<A extends AppNames> extends JobContextBase<ScopeName<A>> {
  /** Enqueues a follow-up job, at most once per (parent job, step) however often this run is retried. */
  enqueue<K extends KindName<A>>(
    kind: K,
    payload: KindPayloads<A>[K],
    options?: FollowUpOptions,
  ): Promise<EnqueueResult>;
  /** Fans out to a group of children and names the job that folds their results (docs/architecture.md §15). */
  group(spec: AppGroupSpec<A>): Promise<GroupView>;
  /** A child job awaited (docs/guide/durable-jobs.md, "Child jobs"): its result, typed by its kind. */
  invoke<K extends KindName<A>>(
    kind: K,
    payload: KindPayloads<A>[K],
    options?: InvokeOptions,
  ): Promise<KindResults<A>[K]>;
  /** A child per payload, all awaited: their results in the payloads' order, typed by their kind. */
  invokeMany<K extends KindName<A>>(
    kind: K,
    payloads: readonly KindPayloads<A>[K][],
    options?: InvokeManyOptions,
  ): Promise<KindResults<A>[K][]>;
}

/** One job of the app, typed by its kind: a group's child (which carries no uniqueKey: the group dedupes). */
export type AppJobRequest<A extends AppNames> = {
  [K in KindName<A>]: { kind: K; payload: KindPayloads<A>[K] } & Omit<
    EnqueueRequest,
    "kind" | "payload" | "uniqueKey" | "queue"
  > & { queue?: QueueName<A> };
}[KindName<A>];

export type AppGroupSpec<A extends AppNames> = Omit<GroupSpec, "children" | "onComplete"> & {
  children: readonly AppJobRequest<A>[];
  onComplete: {
    [K in KindName<A>]: { kind: K; payload?: KindPayloads<A>[K]; queue?: QueueName<A> };
  }[KindName<A>];
};

/** A kind of the app: its schema and handler in the declaration, or in a module loaded on first use (`load`). */
export interface KindBuilder<A extends AppNames> {
  <S extends z.ZodType, R, const N extends string, const Q extends LambdaQueueName<A>>(
    def: KindInput<S, R, N, Q, AppJobContext<A>>,
  ): KindDefinition<S, R, N, Q>;
  <S extends z.ZodType, R, const N extends string, const Q extends LambdaQueueName<A>>(
    def: LazyKindInput<S, R, N, Q>,
  ): KindDefinition<S, R, N, Q>;
}

/**
 * The module half of a kind whose schema and handler load on first use (LazyKindInput): its default
 * export, `export default defineJob({ payload, handler })`, the handler typed from the schema and
 * given the app's context. The declaration imports it lazily: `load: () => import("./echo.job.ts")`.
 */
export type JobBuilder<A extends AppNames> = <S extends z.ZodType, R>(def: {
  payload: S;
  handler: (payload: z.output<S>, ctx: AppJobContext<A>) => Promise<R>;
}) => KindModule<S, R>;

/** A batch kind of the app (docs/architecture.md §18): its key, settings and handler typed from its schema. */
export type BatchKindBuilder<A extends AppNames> = <
  S extends z.ZodType,
  R,
  const N extends string,
  const Q extends LambdaQueueName<A>,
>(
  def: BatchKindInput<S, R, N, Q, ScopeName<A>>,
) => KindDefinition<S, R, N, Q> & { batch: BatchSpec<z.output<S>, R> };

/** A collect kind of the app (docs/architecture.md §19): one run for a burst's payloads, typed from its schema. */
export type CollectKindBuilder<A extends AppNames> = <
  S extends z.ZodType,
  R,
  const N extends string,
  const Q extends LambdaQueueName<A>,
>(
  def: CollectKindInput<S, R, N, Q, AppJobContext<A>>,
) => KindDefinition<S, readonly R[], N, Q>;

export type PoolKindBuilder<A extends AppNames> = <const N extends string, const Q extends PoolQueueName<A>>(
  declaration: PoolKindDeclaration<N, Q>,
) => PoolKindSpec<N, Q>;

/** One schedule per kind it may name, with that kind's payload type. */
export type AppSchedule<A extends AppNames> = {
  [N in KindName<A>]: ScheduleDeclaration<N, QueueName<A>, KindPayloads<A>[N]>;
}[KindName<A>];
export type ScheduleBuilder<A extends AppNames> = (declaration: AppSchedule<A>) => ScheduleDeclaration;

/*
 * The builders of one app, each typed by annotation in the app (`const defineKind: KindBuilder<ThisApp>
 * = kindBuilder()`). `ThisApp` is an interface naming the app's parts by `typeof`; an interface is
 * resolved lazily, so a kind's handler can enqueue a kind declared after it.
 */
export const kindBuilder = <A extends AppNames>(): KindBuilder<A> =>
  ((def: unknown) => def) as KindBuilder<A>;
export const jobBuilder =
  <A extends AppNames>(): JobBuilder<A> =>
  (def) =>
    def as never;
export const batchKindBuilder =
  <A extends AppNames>(): BatchKindBuilder<A> =>
  (def) =>
    batchKindDefinition(def as never) as never;
export const collectKindBuilder =
  <A extends AppNames>(): CollectKindBuilder<A> =>
  (def) =>
    collectKindDefinition(def as never) as never;
export const poolKindBuilder =
  <A extends AppNames>(): PoolKindBuilder<A> =>
  (declaration) =>
    poolKindSpec(declaration);
export const scheduleBuilder =
  <A extends AppNames>(): ScheduleBuilder<A> =>
  (declaration) =>
    declaration as ScheduleDeclaration;

/**
 * An app whose names the types don't know: any queue (of either tier), kind or scope name. The
 * `skyforge` package's builders are bound to it (a user's kinds are then checked by defineApp
 * below); the queues are a union of the two tiers so a pool kind's queue is a string too.
 */
export interface UnboundApp {
  queues: readonly ((QueueDeclaration & { tier?: "lambda" }) | (QueueDeclaration & { tier: "pool" }))[];
  kinds: readonly AnyKind[];
  poolKinds: readonly PoolKindSpec[];
  rateLimits: readonly RateLimitScope[];
}

/**
 * An app's names as `builders` takes them. Left out, `queues` and `kinds` take any names
 * (UnboundApp's); `poolKinds` and `rateLimits` are none (any pool kind name would let every kind
 * name through).
 */
export type BoundNames<A extends Partial<AppNames>> = {
  queues: A extends { queues: infer Q extends AppNames["queues"] } ? Q : UnboundApp["queues"];
  kinds: A extends { kinds: infer K extends AppNames["kinds"] } ? K : UnboundApp["kinds"];
  poolKinds: A extends { poolKinds: infer P extends AppNames["poolKinds"] } ? P : readonly [];
  rateLimits: A extends { rateLimits: infer R extends AppNames["rateLimits"] } ? R : readonly [];
};

/** Every builder of one app, bound to its names (any part of which may be left out). */
export interface Builders<A extends Partial<AppNames>> {
  defineKind: KindBuilder<BoundNames<A>>;
  defineBatchKind: BatchKindBuilder<BoundNames<A>>;
  defineCollectKind: CollectKindBuilder<BoundNames<A>>;
  definePoolKind: PoolKindBuilder<BoundNames<A>>;
  defineSchedule: ScheduleBuilder<BoundNames<A>>;
  defineJob: JobBuilder<BoundNames<A>>;
}

/**
 * The builders bound to an app's names, typed by the annotation of the variable that holds them,
 * an interface of `typeof` the app's parts: `const bound: Builders<ThisApp> = builders()`, then
 * `const { defineKind } = bound`. An interface is resolved lazily, so a kind's handler can enqueue a
 * kind of the same list; a type argument (or an annotated destructuring) would be resolved while the
 * kinds' own types are being inferred.
 */
export function builders<A extends Partial<AppNames> = UnboundApp>(): Builders<A> {
  return {
    defineKind: kindBuilder<BoundNames<A>>(),
    defineBatchKind: batchKindBuilder<BoundNames<A>>(),
    defineCollectKind: collectKindBuilder<BoundNames<A>>(),
    definePoolKind: poolKindBuilder<BoundNames<A>>(),
    defineSchedule: scheduleBuilder<BoundNames<A>>(),
    defineJob: jobBuilder<BoundNames<A>>(),
  };
}

/** Literal-preserving identity helpers, so queue and scope names become types. */
export const defineQueues = <const Q extends readonly QueueDeclaration[]>(queues: Q): Q => queues;
export const defineRateLimits = <const R extends readonly RateLimitScope[]>(scopes: R): R => scopes;

/** A tier's queue names; any name when the queues' names aren't literal types (declared without defineQueues). */
type LambdaQueueOf<Q extends readonly QueueDeclaration[]> = string extends Q[number]["name"]
  ? string
  : Exclude<Q[number], { tier: "pool" }>["name"];
type PoolQueueOf<Q extends readonly QueueDeclaration[]> = string extends Q[number]["name"]
  ? string
  : Extract<Q[number], { tier: "pool" }>["name"];

/**
 * A kind as declared when its queue is one of the app's Lambda-tier queues; else the sentence that
 * says it is not, which no kind is assignable to, so the compile error quotes it. A queue typed only
 * as `string` (a kind built by code, a queue list without literal names) passes: the check at start
 * still sees it. Distributes over a union of kinds.
 */
type OnLambdaQueue<Q extends readonly QueueDeclaration[], K> = K extends {
  name: infer N extends string;
  queue: infer U extends string;
}
  ? [U] extends [LambdaQueueOf<Q>] | [string extends U ? U : never]
    ? K
    : `kind '${N}' names queue '${U}', which is not one of the app's Lambda-tier queues`
  : K;

/** The same for a pool kind and the app's pool-tier queues. */
type OnPoolQueue<Q extends readonly QueueDeclaration[], P> = P extends {
  name: infer N extends string;
  queue: infer U extends string;
}
  ? [U] extends [PoolQueueOf<Q>] | [string extends U ? U : never]
    ? P
    : `pool kind '${N}' names queue '${U}', which is not one of the app's pool-tier queues`
  : P;

/**
 * What defineApp's argument must also be: nothing more when every kind is on a queue of its tier;
 * else kind lists in which each misplaced kind's place holds its sentence. Only then, because any
 * type joined to the kinds' own changes how an array literal built with spreads is inferred.
 */
type QueueCheck<
  Q extends readonly QueueDeclaration[],
  K extends readonly AnyKind[],
  P extends readonly PoolKindSpec[],
> = [Extract<OnLambdaQueue<Q, K[number]> | OnPoolQueue<Q, P[number]>, string>] extends [never]
  ? unknown
  : { kinds: readonly OnLambdaQueue<Q, K[number]>[]; poolKinds: readonly OnPoolQueue<Q, P[number]>[] };

/**
 * The app value. Checks at once what types can't (docs/architecture.md §2): unique names, kinds on
 * declared queues of the right tier, sound queue, pool and rate-limit settings. A bad app fails at
 * start, in every process and in the deploy, with every problem listed.
 */
export function defineApp<
  const Q extends readonly QueueDeclaration[],
  const K extends readonly AnyKind[],
  const P extends readonly PoolKindSpec[],
  const S extends readonly ScheduleDeclaration[],
  const R extends readonly RateLimitScope[],
>(
  // Checked at compile time too (only checked, never inferred from): each kind on a declared queue of its tier.
  app: App<Q, K, P, S, R> & NoInfer<QueueCheck<Q, K, P>>,
): App<Q, K, P, S, R> {
  assertValidDeclarations(app);
  return app;
}
