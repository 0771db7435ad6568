import type { MisfirePolicy } from "../declarations/schedule-declaration.ts";

// Declared in the model (lib/declarations/schedule-declaration.ts); named here too for lib/cron, which reads it with the item.
export { type MisfirePolicy, misfirePolicies } from "../declarations/schedule-declaration.ts";

/** A schedule's settings once parsed (lib/cron/schedule.ts validates them; the store only keeps them). */
export interface ScheduleFields {
  cron: string;
  timezone: string;
  kind: string;
  payload?: unknown;
  queue?: string;
  enabled: boolean;
  misfire: MisfirePolicy;
}

/**
 * A schedule as written: its settings and its first fire after the write (none while disabled). The
 * fire is computed above the store (lib/cron/schedule.ts), which knows cron expressions.
 */
export interface ScheduleWrite extends ScheduleFields {
  firstRunAt: number | undefined;
}

export type ScheduleSource = "code" | "api";

/** The stored schedule: one item in the schedules partition. Times are epoch ms. */
export interface ScheduleItem {
  pk: string;
  sk: string;
  name: string;
  cron: string;
  timezone: string;
  kind: string;
  payloadJson: string;
  queue?: string;
  enabled: boolean;
  misfire: MisfirePolicy;
  /** The next fire not yet enqueued; absent only when the expression has no future fire. */
  nextRunAt?: number;
  lastRunAt?: number;
  source: ScheduleSource;
  /** For code schedules: the hash of the declaration last written, so a sync can tell it changed. */
  declaredHash?: string;
  updatedAt: number;
  /** Why the last failed fire failed, and when: a schedule that can't fire says so in GET /schedules. */
  lastError?: string;
  lastErrorAt?: number;
  /** Bumped by every PUT/sync (never by a tick): the optimistic-concurrency guard between editors. */
  revision: number;
}
