/**
 * `skyforge`: what a project's app module and its kinds import (packages/skyforge/README.md). The
 * builders here are bound to no app: a kind's queue is checked against the app's declared queues by
 * `defineApp`, and `builders<MyApp>()` gives builders bound to the app's own names (queues, kinds,
 * rate-limit scopes) for handlers that enqueue or take rate limits.
 */
import {
  type BatchKindBuilder,
  batchKindBuilder,
  type CollectKindBuilder,
  collectKindBuilder,
  type JobBuilder,
  jobBuilder,
  type KindBuilder,
  kindBuilder,
  type PoolKindBuilder,
  poolKindBuilder,
  type ScheduleBuilder,
  scheduleBuilder,
  type UnboundApp,
} from "../../../lib/declarations/define-app.ts";

export { type App, type AppGroupSpec, type AppJobContext, type AppJobRequest, type AppSchedule, type BatchKindBuilder, type Builders, builders, type CollectKindBuilder, defineApp, defineQueues, defineRateLimits, type JobBuilder, type KindBuilder, type PoolKindBuilder, type ScheduleBuilder, type UnboundApp } from "../../../lib/declarations/define-app.ts";
export { type AppNames, type KindName, type KindPayloads, type LambdaQueueName, type PayloadOf, type PoolQueueName, type QueueName, type ScopeName } from "../../../lib/declarations/app-names.ts";
export { defineEvent, type EventDeclaration } from "../../../lib/declarations/event-declaration.ts";
export type { PoolBatch, PoolKindDeclaration, PoolKindSpec } from "../../../lib/declarations/pool-kind.ts";
export type { QueueDeclaration, QueueTier } from "../../../lib/declarations/queue-declaration.ts";
export type { RateLimitScope } from "../../../lib/declarations/rate-limit-scope.ts";
export type { ScaleDeclaration } from "../../../lib/declarations/scale.ts";
export type { MisfirePolicy, ScheduleDeclaration } from "../../../lib/declarations/schedule-declaration.ts";
export {
  EventTimeoutError,
  NonDeterminismError,
  ParallelStepError,
  TokenTimeoutError,
  VersionChangedError,
  WaitTimeoutError,
} from "../../../lib/durable-errors.ts";
export type { BackPressure } from "../../../lib/errors.ts";
export {
  ChildJobError,
  ConfigError,
  HandlerError,
  RetryAfterError,
  SkyforgeError,
  ThrottledError,
  UnrecoverableError,
  UsageError,
} from "../../../lib/errors.ts";
export type {
  BatchContext,
  BatchItem,
  BatchOutcome,
  BatchSettings,
} from "../../../lib/job/batch.ts";
export type { DebounceSettings, SingletonSettings } from "../../../lib/job/coalesce.ts";
export type { DurableContext, EventWait, TokenOptions, WaitToken } from "../../../lib/job/durable.ts";
export type { FlowRate, FlowSettings } from "../../../lib/job/flow.ts";
export type {
  AbortCause,
  AnyKind,
  BackoffPolicy,
  CompletionContext,
  FollowUpOptions,
  JobContext,
  JobContextBase,
  KindDefinition,
  KindModule,
  LazyKindInput,
  OnExhausted,
  RateLimitAnswer,
  RateLimitTake,
} from "../../../lib/job/kind.ts";
export { KindLoadError } from "../../../lib/job/kind-loading.ts";
export type { DeliveryLane } from "../../../lib/job/lanes.ts";
export type { EnqueueRequest, EnqueueResult, JobView } from "../../../lib/job/schemas.ts";
export type { JobStatus } from "../../../lib/job/status.ts";
export type { Log } from "../../../lib/observability/log.ts";

/*
 * The builders bound to no app: any queue name here (defineApp refuses a kind whose queue the app
 * doesn't declare, at compile time and at start), and `ctx.enqueue` / `ctx.rateLimit` take any
 * name (the engine refuses an undeclared one when the handler runs). For names checked inside
 * handlers too, take the builders from `builders<MyApp>()`.
 */
export const defineKind: KindBuilder<UnboundApp> = kindBuilder<UnboundApp>();
export const defineBatchKind: BatchKindBuilder<UnboundApp> = batchKindBuilder<UnboundApp>();
export const defineCollectKind: CollectKindBuilder<UnboundApp> = collectKindBuilder<UnboundApp>();
export const definePoolKind: PoolKindBuilder<UnboundApp> = poolKindBuilder<UnboundApp>();
export const defineSchedule: ScheduleBuilder<UnboundApp> = scheduleBuilder<UnboundApp>();
/** The module half of a kind loaded on first use (`export default defineJob({ payload, handler })`). */
export const defineJob: JobBuilder<UnboundApp> = jobBuilder<UnboundApp>();
