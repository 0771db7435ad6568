import { GetCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { InvalidItemState } from "../errors.ts";
import {
  attributeEquals,
  itemExists,
  itemMissing,
  leaseExpired,
  leaseOwnedBy,
  nextRunAtIs,
  revisionIs,
} from "./conditions.ts";
import {
  conditionalDelete,
  conditionalPut,
  conditionalUpdate,
  orOnConflict,
  type StoreContext,
  wonRace,
} from "./context.ts";
import { Expr, or, Update } from "./expression.ts";
import { leaseKey, SCHEDULES_PARTITION, scheduleKey } from "./keys.ts";
import type { ScheduleItem, ScheduleSource, ScheduleWrite } from "./schedule-item.ts";
import { formatStamp, stampFormat } from "./stored-formats.ts";

const TOTAL = "TOTAL" as const;

/** getSchedule — strongly consistent read. result: the item or undefined. */
export async function getSchedule(ctx: StoreContext, name: string): Promise<ScheduleItem | undefined> {
  const out = await ctx.doc.send(
    new GetCommand({
      TableName: ctx.table,
      Key: scheduleKey(name),
      ConsistentRead: true,
      ReturnConsumedCapacity: TOTAL,
    }),
  );
  return out.Item as ScheduleItem | undefined;
}

/** listSchedules — every schedule: one Query on their shared partition, followed to its last page. */
export async function listSchedules(ctx: StoreContext): Promise<ScheduleItem[]> {
  const items: ScheduleItem[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const e = new Expr();
    const out = await ctx.doc.send(
      new QueryCommand({
        TableName: ctx.table,
        KeyConditionExpression: `${e.name("pk")} = ${e.value(SCHEDULES_PARTITION)}`,
        ...e.params(),
        ConsistentRead: true,
        ...(startKey ? { ExclusiveStartKey: startKey } : {}),
        ReturnConsumedCapacity: TOTAL,
      }),
    );
    items.push(...((out.Items ?? []) as ScheduleItem[]));
    startKey = out.LastEvaluatedKey;
  } while (startKey);
  return items;
}

/**
 * Who writes: the API creates "api" schedules (or "code" ones for a declared name not yet synced);
 * the declared-schedule sync passes the declaration's hash.
 */
export interface ScheduleOrigin {
  source: ScheduleSource;
  declaredHash?: string;
}

/** Concurrent editors of one schedule retry this often before the caller is told to. */
const PUT_ATTEMPTS = 3;

/**
 * putSchedule — upsert one schedule.
 * input: the parsed settings with their first fire, who writes it, and the write's instant.
 * condition: create: no item yet. update: revision unchanged since our read (ticks never bump it,
 *   so only another editor makes us re-read and retry).
 * result: { created, item }. nextRunAt is recomputed from now only when cron, timezone or enabled
 *   changed; otherwise it is left alone so a tick's concurrent advance is never undone. An update
 *   keeps the stored source; declaredHash changes only when a sync passes one.
 */
export async function putSchedule(
  ctx: StoreContext,
  name: string,
  input: ScheduleWrite,
  origin: ScheduleOrigin,
  now: number = ctx.clock.now(),
): Promise<{ created: boolean; item: ScheduleItem }> {
  for (let attempt = 1; ; attempt++) {
    const current = await getSchedule(ctx, name);
    // A lost condition means another editor wrote between our read and our write: read again.
    const written = await orOnConflict(
      writeSchedule(ctx, name, current, input, origin, now),
      () => undefined,
    );
    if (written) return written;
    if (attempt >= PUT_ATTEMPTS) {
      throw new InvalidItemState(`schedule "${name}" is being changed concurrently; retry`, current);
    }
  }
}

/** One try of putSchedule against the item as read (undefined: create). */
async function writeSchedule(
  ctx: StoreContext,
  name: string,
  current: ScheduleItem | undefined,
  input: ScheduleWrite,
  origin: ScheduleOrigin,
  now: number,
): Promise<{ created: boolean; item: ScheduleItem }> {
  const key = scheduleKey(name);
  const fields = {
    name,
    cron: input.cron,
    timezone: input.timezone,
    kind: input.kind,
    payloadJson: JSON.stringify(input.payload ?? null),
    enabled: input.enabled,
    misfire: input.misfire,
    updatedAt: now,
  };
  if (!current) {
    const item: ScheduleItem = {
      ...key,
      ...fields,
      ...(input.queue !== undefined ? { queue: input.queue } : {}),
      ...(input.firstRunAt !== undefined ? { nextRunAt: input.firstRunAt } : {}),
      source: origin.source,
      ...(origin.declaredHash !== undefined ? { declaredHash: origin.declaredHash } : {}),
      revision: 1,
      ...formatStamp("schedule"),
    };
    await conditionalPut(ctx, "putSchedule", item as ScheduleItem & Record<string, unknown>, itemMissing, {
      readCurrent: false,
    });
    return { created: true, item };
  }
  const retime =
    current.cron !== input.cron || current.timezone !== input.timezone || current.enabled !== input.enabled;
  const item = await conditionalUpdate<ScheduleItem>(
    ctx,
    "putSchedule",
    key,
    (e) => {
      const update = new Update(e).setAll(fields).set("revision", current.revision + 1);
      if (input.queue !== undefined) update.set("queue", input.queue);
      else update.remove("queue");
      if (origin.declaredHash !== undefined) update.set("declaredHash", origin.declaredHash);
      if (retime) {
        if (input.firstRunAt !== undefined) update.set("nextRunAt", input.firstRunAt);
        else update.remove("nextRunAt");
      }
      return { update, condition: revisionIs(current.revision) };
    },
    { readCurrent: false },
  );
  return { created: false, item };
}

/**
 * deleteSchedule — removes a schedule of the given source.
 * condition: the item exists and its source is `source` (the API may only delete "api" schedules;
 *   the sync only "code" ones).
 * result: { deleted: true }, or { deleted: false, current } where current is undefined when there
 *   was nothing to delete.
 */
export async function deleteSchedule(
  ctx: StoreContext,
  name: string,
  source: ScheduleSource,
): Promise<DeleteScheduleResult> {
  const write = conditionalDelete(
    ctx,
    "deleteSchedule",
    scheduleKey(name),
    attributeEquals("source", source),
  );
  return orOnConflict(
    write.then((): DeleteScheduleResult => ({ deleted: true })),
    (current: ScheduleItem | undefined): DeleteScheduleResult => ({ deleted: false, current }),
  );
}

export type DeleteScheduleResult = { deleted: true } | { deleted: false; current: ScheduleItem | undefined };

/**
 * advanceSchedule — moves a schedule past the fires a tick has enqueued.
 * input: the nextRunAt the tick planned from, the new one (undefined: no further fire), the last fire.
 * condition: nextRunAt still equals the planned-from value, so of two runners planning the same
 *   fires only one advances, and an API edit that re-timed the schedule meanwhile wins.
 * result: true when advanced, false when the race was lost (the fires were deduped anyway).
 */
export async function advanceSchedule(
  ctx: StoreContext,
  name: string,
  expectedNextRunAt: number,
  newNextRunAt: number | undefined,
  lastRunAt: number | undefined,
): Promise<boolean> {
  return wonRace(
    conditionalUpdate(
      ctx,
      "advanceSchedule",
      scheduleKey(name),
      (e) => {
        const update = new Update(e);
        if (newNextRunAt !== undefined) update.set("nextRunAt", newNextRunAt);
        else update.remove("nextRunAt");
        if (lastRunAt !== undefined) update.set("lastRunAt", lastRunAt);
        return { update, condition: nextRunAtIs(expectedNextRunAt) };
      },
      { readCurrent: false },
    ),
  );
}

/**
 * recordFireError — a fire of this schedule failed; GET /schedules shows why until the next failure.
 * input: the schedule's name, the error (trimmed to 500 characters), when.
 * condition: the schedule still exists (a deleted one is not brought back).
 * result: true when recorded; false when the schedule is gone.
 */
export async function recordFireError(
  ctx: StoreContext,
  name: string,
  error: string,
  at: number,
): Promise<boolean> {
  return wonRace(
    conditionalUpdate(
      ctx,
      "recordFireError",
      scheduleKey(name),
      (e) => ({
        update: new Update(e).set("lastError", error.slice(0, 500)).set("lastErrorAt", at),
        condition: itemExists,
      }),
      { readCurrent: false },
    ),
  );
}

export type LeaseResult =
  | { held: true; leaseUntil: number }
  | { held: false; owner?: string; leaseUntil?: number };

/**
 * acquireLease — become (or stay) the leader for `name` until now + ttl.
 * condition: no lease item, OR its leaseUntil has passed, OR this owner already holds it (renewal).
 * result: { held: true, leaseUntil } or { held: false } naming the current holder.
 */
export async function acquireLease(
  ctx: StoreContext,
  name: string,
  owner: string,
  ttlMs: number,
): Promise<LeaseResult> {
  const now = ctx.clock.now();
  const leaseUntil = now + ttlMs;
  const write = conditionalUpdate(ctx, "acquireLease", leaseKey(name), (e) => ({
    update: stampFormat(new Update(e).set("owner", owner).set("leaseUntil", leaseUntil), "leaderLease"),
    condition: or(itemMissing, leaseExpired(now), leaseOwnedBy(owner)),
  }));
  return orOnConflict(
    write.then((): LeaseResult => ({ held: true, leaseUntil })),
    (current: { owner?: string; leaseUntil?: number } | undefined): LeaseResult => ({
      held: false,
      ...(current?.owner !== undefined ? { owner: current.owner } : {}),
      ...(current?.leaseUntil !== undefined ? { leaseUntil: current.leaseUntil } : {}),
    }),
  );
}

/**
 * releaseLease — hand leadership back so the next runner needn't wait for the expiry.
 * condition: this owner still holds it. result: true when released; false when it had already
 *   passed to someone else (who keeps it).
 */
export async function releaseLease(ctx: StoreContext, name: string, owner: string): Promise<boolean> {
  return wonRace(
    conditionalDelete(ctx, "releaseLease", leaseKey(name), leaseOwnedBy(owner), { readCurrent: false }),
  );
}
