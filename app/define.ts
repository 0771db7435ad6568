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
} from "../lib/declarations/define-app.ts";
import type { kinds } from "./index.ts";
import type { poolKinds } from "./pool-kinds.ts";
import type { queues } from "./queues.ts";
import type { rateLimits } from "./rate-limits.ts";

/** This app's names, read lazily by the builders (type-only imports: no module cycle at run time). */
interface ThisApp {
  queues: typeof queues;
  kinds: typeof kinds;
  poolKinds: typeof poolKinds;
  rateLimits: typeof rateLimits;
}

/*
 * The builders bound to this app: a kind's queue, a schedule's kind and queue, `ctx.rateLimit(scope)`
 * and `ctx.enqueue(kind, payload)` accept only names declared here, so a typo is a compile error.
 */
export const defineKind: KindBuilder<ThisApp> = kindBuilder<ThisApp>();
export const defineBatchKind: BatchKindBuilder<ThisApp> = batchKindBuilder<ThisApp>();
export const defineCollectKind: CollectKindBuilder<ThisApp> = collectKindBuilder<ThisApp>();
export const definePoolKind: PoolKindBuilder<ThisApp> = poolKindBuilder<ThisApp>();
export const defineSchedule: ScheduleBuilder<ThisApp> = scheduleBuilder<ThisApp>();
/** The module half of a kind whose schema and handler load on first use (its declaration's `load`). */
export const defineJob: JobBuilder<ThisApp> = jobBuilder<ThisApp>();
