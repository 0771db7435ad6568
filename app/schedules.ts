import { defineSchedule } from "./define.ts";

/**
 * Schedules that live in code. Adding one is one entry here; the next deploy (or `npm start`) syncs
 * it into the table. An API edit of one survives until its declaration here changes.
 */
export const schedules = [
  defineSchedule({
    name: "heartbeat-echo",
    cron: "0 */5 * * * *",
    kind: "echo",
    payload: { from: "cron" },
    enabled: true,
  }),
] as const;
