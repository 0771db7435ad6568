import pLimit from "p-limit";
import { planFires } from "../cron/fire-plan.ts";
import { fireTimesOf } from "../cron/schedule.ts";
import { ClientError } from "../errors.ts";
import type { EnqueueRequest } from "../job/schemas.ts";
import { errorFields } from "../observability/log.ts";
import type { Engine } from "../services/engine-services.ts";
import type { ScheduleItem } from "../store/schedule-item.ts";
import {
  acquireLease,
  advanceSchedule,
  listSchedules,
  recordFireError,
  releaseLease,
} from "../store/schedule-ops.ts";

export const CRON_LEASE = "cron";
/** Bounds one schedule's work per tick; the rest carries over through nextRunAt. */
export const DEFAULT_MAX_FIRES_PER_TICK = 100;
/** Schedules handled at once; fires of one schedule go in order. */
const SCHEDULE_CONCURRENCY = 4;

export interface CronTickDeps {
  engine: Pick<Engine, "producer" | "store" | "clock" | "log" | "metrics" | "registry">;
  /** This runner's identity in the leader lease (e.g. the Lambda request id or a process id). */
  owner: string;
  /** The interval between ticks; also the lookahead, so fires finer than a tick are enqueued ahead. */
  tickMs: number;
  /** A fire at most this late is on time; older ones follow the schedule's misfire policy. Default: tickMs. */
  graceMs?: number;
  maxFiresPerTick?: number;
}

export interface CronTickReport {
  leader: boolean;
  /** Schedules listed. */
  schedules: number;
  /** Enabled schedules with a fire before now + lookahead. */
  due: number;
  /** Jobs newly enqueued. */
  fired: number;
  /** Fires that already had their job (a retried or overlapping tick). */
  duplicates: number;
  /** Misfires dropped by the policy. */
  missed: number;
  /** Fires another enqueue was writing at that moment: retried next tick, deduped then. */
  deferred: number;
  failed: { name: string; fireTime: string; error: string }[];
  advanced: number;
  /** Advances lost to another runner or to an API edit that re-timed the schedule. */
  raced: number;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** The fire's job: its unique key makes a second enqueue of the same instant a no-op. */
export function fireRequest(schedule: ScheduleItem, fireTime: number): EnqueueRequest {
  const at = iso(fireTime);
  return {
    kind: schedule.kind,
    payload: JSON.parse(schedule.payloadJson),
    ...(schedule.queue !== undefined ? { queue: schedule.queue } : {}),
    runAt: at,
    uniqueKey: `cron:${schedule.name}:${at}`,
  };
}

/**
 * One cron tick (docs/architecture.md §7): take the leader lease, enqueue every due fire of every enabled
 * schedule, advance each schedule past what was enqueued, release the lease. Safe to run twice at
 * once: the lease picks one leader, and if two runners still overlap (an expired lease taken over
 * mid-tick) the unique keys dedupe the fires and the conditional advance lets only one move on.
 */
export async function runCronTick(deps: CronTickDeps): Promise<CronTickReport> {
  const { engine, owner, tickMs } = deps;
  const { log } = engine;
  const ctx = engine.store;
  const now = engine.clock.now();
  const report: CronTickReport = {
    leader: false,
    schedules: 0,
    due: 0,
    fired: 0,
    duplicates: 0,
    missed: 0,
    deferred: 0,
    failed: [],
    advanced: 0,
    raced: 0,
  };
  const lease = await acquireLease(ctx, CRON_LEASE, owner, Math.max(30_000, 2 * tickMs));
  if (!lease.held) {
    log.debug("cron: another runner leads", { owner, leader: lease.owner });
    return report;
  }
  report.leader = true;
  try {
    const schedules = await listSchedules(ctx);
    report.schedules = schedules.length;
    const horizon = now + tickMs;
    const due = schedules.filter((s) => s.enabled && s.nextRunAt !== undefined && s.nextRunAt < horizon);
    report.due = due.length;
    const limit = pLimit(SCHEDULE_CONCURRENCY);
    await Promise.all(due.map((s) => limit(() => fireSchedule(deps, s, now, report))));
  } finally {
    await releaseLease(ctx, CRON_LEASE, owner).catch((err: unknown) =>
      log.warn("cron: lease release failed; it expires on its own", errorFields(err)),
    );
  }
  if (report.fired || report.missed || report.failed.length || report.deferred) {
    log.info("cron tick", { ...report, failed: report.failed.length });
  }
  return report;
}

/** A failed fire shows where an operator looks: the schedule's lastError, a metric (alarmed on), the log. */
async function fireFailed(
  engine: CronTickDeps["engine"],
  schedule: ScheduleItem,
  fire: number,
  err: unknown,
  report: CronTickReport,
): Promise<void> {
  const error = err instanceof Error ? err.message : String(err);
  report.failed.push({ name: schedule.name, fireTime: iso(fire), error });
  engine.log.error("cron: fire failed", {
    schedule: schedule.name,
    fireTime: iso(fire),
    ...errorFields(err),
  });
  engine.metrics.count("cronFailed", scheduleQueue(engine, schedule), schedule.kind);
  await recordFireError(engine.store, schedule.name, error, engine.clock.now()).catch((e: unknown) =>
    engine.log.warn("cron: could not record the fire's error", {
      schedule: schedule.name,
      ...errorFields(e),
    }),
  );
}

/** The queue a schedule's jobs go to, for its metrics. */
function scheduleQueue(engine: Pick<Engine, "registry">, schedule: ScheduleItem): string {
  return schedule.queue ?? engine.registry.get(schedule.kind)?.queue ?? "unknown";
}

/** Enqueues one schedule's planned fires in order, then advances it past the ones that are settled. */
async function fireSchedule(
  deps: CronTickDeps,
  schedule: ScheduleItem,
  now: number,
  report: CronTickReport,
): Promise<void> {
  const { engine, tickMs } = deps;
  const planned = schedule.nextRunAt as number;
  const plan = planFires({
    nextRunAt: planned,
    now,
    lookaheadMs: tickMs,
    graceMs: deps.graceMs ?? tickMs,
    misfire: schedule.misfire,
    maxFiresPerTick: deps.maxFiresPerTick ?? DEFAULT_MAX_FIRES_PER_TICK,
    times: fireTimesOf(schedule),
  });
  report.missed += plan.missed;
  if (plan.missed) {
    engine.metrics.count("cronMissed", scheduleQueue(engine, schedule), schedule.kind, plan.missed);
    engine.log.warn("cron: misfires", {
      schedule: schedule.name,
      missed: plan.missed,
      policy: schedule.misfire,
    });
  }
  let nextRunAt = plan.nextRunAt;
  let lastRunAt: number | undefined;
  for (const fire of plan.fires) {
    try {
      const { job, duplicate } = await engine.producer.enqueue(fireRequest(schedule, fire), {
        uniqueKeyScope: "retained",
      });
      report[duplicate ? "duplicates" : "fired"] += 1;
      if (!duplicate) engine.metrics.count("cronFired", job.queue, job.kind);
      lastRunAt = fire;
    } catch (err) {
      const permanent = err instanceof ClientError && err.code !== "conflict";
      if (err instanceof ClientError && err.code === "conflict") report.deferred += 1;
      else await fireFailed(engine, schedule, fire, err, report);
      // A bad kind or payload fails every fire alike: move past them. Anything else may pass, so the
      // next tick starts again from this fire (its already-enqueued predecessors dedupe).
      if (!permanent) nextRunAt = fire;
      break;
    }
  }
  if (nextRunAt === planned && lastRunAt === undefined) return;
  const won = await advanceSchedule(engine.store, schedule.name, planned, nextRunAt, lastRunAt);
  report[won ? "advanced" : "raced"] += 1;
}
