import type { ScheduleInputIn } from "./schedule.ts";

/** A schedule that lives in code: synced into the table by every deploy (and the local stack's start). */
export type ScheduleDeclaration = { name: string } & ScheduleInputIn;

/**
 * Schedules declared in code. Adding one: append an entry here; the next sync creates it. An API
 * edit of one of these survives until its declaration here changes.
 */
export const declaredSchedules: readonly ScheduleDeclaration[] = [
  {
    name: "heartbeat-echo",
    cron: "0 */5 * * * *",
    kind: "echo",
    payload: { from: "cron" },
    enabled: true,
  },
];
