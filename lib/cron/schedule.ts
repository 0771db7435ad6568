import { Cron } from "croner";
import * as z from "zod";
import type { ClientIssue } from "../errors.ts";
import { BoundedJson } from "../job/json-depth.ts";
import {
  type MisfirePolicy,
  misfirePolicies,
  type ScheduleItem,
  type ScheduleSource,
  type ScheduleWrite,
} from "../store/schedule-item.ts";
import type { FireTimes } from "./fire-plan.ts";

/** Schedule names end up in keys and unique keys, so they stay short and plain. */
export const ScheduleName = z
  .string()
  .regex(/^[a-zA-Z0-9_.-]{1,64}$/, "schedule names are 1-64 letters, digits, '_', '.' or '-'");

/** Every tick reads every schedule, so payloads stay small. */
export const MAX_SCHEDULE_PAYLOAD_BYTES = 8 * 1024;

/**
 * Every tick and every GET /schedules reads all schedules, so their number is bounded: 500 at
 * 8 KB each stays well under Lambda's 6 MB response.
 */
export const MAX_SCHEDULES = 500;

/** 5 fields, or 6 with a leading seconds field; croner's nicknames (@daily, ...) are accepted too. */
const CRON_MODE = "5-or-6-parts" as const;

function timeZoneProblem(timezone: string): string | undefined {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: timezone });
    return undefined;
  } catch {
    return `timezone: unknown time zone "${timezone}"`;
  }
}

/** croner's own reason, without its class-name prefix. */
function cronReason(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).replace(/^Cron\w*:\s*/, "");
}

function cronProblem(cron: string, timezone: string | undefined): string | undefined {
  try {
    const job = new Cron(cron, { mode: CRON_MODE, paused: true, ...(timezone ? { timezone } : {}) });
    // A valid pattern can still never match (30 February): it would sit in the table forever.
    if (job.nextRun() === null) return `cron: expression "${cron}" never fires`;
    return undefined;
  } catch (err) {
    return `cron: invalid expression "${cron}": ${cronReason(err)}`;
  }
}

/** The PUT /schedules/{name} body, also the shape of a schedule declared in code. */
export const ScheduleInput = z
  .object({
    cron: z.string().min(1).max(200),
    timezone: z.string().min(1).max(64).default("UTC"),
    kind: z.string().min(1).max(64),
    // Depth-checked before anything recurses into it (lib/job/json-depth.ts).
    payload: BoundedJson.optional(),
    queue: z
      .string()
      .regex(/^[a-z][a-z0-9-]{0,39}$/, "queue names are lowercase letters, digits and dashes")
      .optional(),
    enabled: z.boolean().default(true),
    misfire: z.enum(misfirePolicies).default("skip"),
  })
  .strict()
  .superRefine((input, ctx) => {
    const tzProblem = timeZoneProblem(input.timezone);
    if (tzProblem) ctx.addIssue({ code: "custom", path: ["timezone"], message: tzProblem });
    // With a bad zone the cron is still checked on its own, so both problems show at once.
    const problem = cronProblem(input.cron, tzProblem ? undefined : input.timezone);
    if (problem) ctx.addIssue({ code: "custom", path: ["cron"], message: problem });
    const bytes = Buffer.byteLength(JSON.stringify(input.payload ?? null));
    if (bytes > MAX_SCHEDULE_PAYLOAD_BYTES) {
      ctx.addIssue({
        code: "custom",
        path: ["payload"],
        message: `payload: ${bytes} bytes once serialized; schedules allow ${MAX_SCHEDULE_PAYLOAD_BYTES}`,
      });
    }
  });
/** As written by a caller (defaults optional). */
export type ScheduleInputIn = z.input<typeof ScheduleInput>;
/** After parsing (defaults filled in). */
export type ScheduleInput = z.output<typeof ScheduleInput>;

/** One line naming every problem, for an error message; issues that don't name their field get it. */
export function describeIssues(issues: readonly ClientIssue[]): string {
  return issues
    .map((i) =>
      i.path === "(root)" || i.message.startsWith(`${i.path}:`) ? i.message : `${i.path}: ${i.message}`,
    )
    .join("; ");
}

/** What GET /schedules returns. */
export interface ScheduleView {
  name: string;
  cron: string;
  timezone: string;
  kind: string;
  payload: unknown;
  queue?: string;
  enabled: boolean;
  misfire: MisfirePolicy;
  nextRunAt?: string;
  lastRunAt?: string;
  lastError?: string;
  lastErrorAt?: string;
  source: ScheduleSource;
  updatedAt: string;
}

const iso = (ms: number) => new Date(ms).toISOString();

export function toScheduleView(item: ScheduleItem): ScheduleView {
  return {
    name: item.name,
    cron: item.cron,
    timezone: item.timezone,
    kind: item.kind,
    payload: JSON.parse(item.payloadJson),
    ...(item.queue !== undefined ? { queue: item.queue } : {}),
    enabled: item.enabled,
    misfire: item.misfire,
    ...(item.nextRunAt !== undefined ? { nextRunAt: iso(item.nextRunAt) } : {}),
    ...(item.lastRunAt !== undefined ? { lastRunAt: iso(item.lastRunAt) } : {}),
    ...(item.lastError !== undefined ? { lastError: item.lastError } : {}),
    ...(item.lastErrorAt !== undefined ? { lastErrorAt: iso(item.lastErrorAt) } : {}),
    source: item.source,
    updatedAt: iso(item.updatedAt),
  };
}

type Timed = Pick<ScheduleItem, "cron" | "timezone">;

/**
 * The schedule's fire instants through croner, in its time zone. croner's DST rules: a fixed-time
 * pattern (single second/minute/hour) whose local time falls in a spring-forward gap fires once when
 * the clock has jumped, and once (at the first occurrence) on a fall-back repeat; an interval pattern
 * skips gap times and fires on both occurrences of a repeated time. Either way each instant is distinct.
 */
export function fireTimesOf(schedule: Timed): FireTimes {
  const job = new Cron(schedule.cron, { mode: CRON_MODE, paused: true, timezone: schedule.timezone });
  return {
    after: (ms) => job.nextRun(new Date(ms))?.getTime(),
    before: (ms) => job.previousRuns(1, new Date(ms))[0]?.getTime(),
  };
}

/** The first fire strictly after `afterMs`, or undefined when there is none. */
export function nextFireAfter(schedule: Timed, afterMs: number): number | undefined {
  return fireTimesOf(schedule).after(afterMs);
}

/** What the store writes for parsed settings: with the first fire after `now` (none while disabled). */
export function scheduleWrite(input: ScheduleInput, now: number): ScheduleWrite {
  return { ...input, firstRunAt: input.enabled ? nextFireAfter(input, now) : undefined };
}
