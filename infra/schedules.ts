import { dlqUrls, eventSourceMappingPermission, eventSourceMappings, queues, queueUrls } from "./queues";
import { table } from "./storage";

const env = { SKYFORGE_TABLE: table.name, SKYFORGE_QUEUE_URLS: queueUrls };
const link = [table, ...queues.map((q) => q.queue)];

/** Promotes scheduled jobs, drains DLQs, repairs event sources to the recorded pause/concurrency. */
export const reaper = new sst.aws.CronV2("Reaper", {
  schedule: "rate(1 minute)",
  function: {
    handler: "functions/reaper.handler",
    timeout: "50 seconds",
    link: [...link, ...queues.map((q) => q.dlq)],
    environment: { ...env, SKYFORGE_DLQ_URLS: dlqUrls, SKYFORGE_EVENT_SOURCE_MAPPINGS: eventSourceMappings },
    permissions: [eventSourceMappingPermission],
  },
});

/** Purges dead jobs past retention; TTL removes done and cancelled ones. */
export const cleanup = new sst.aws.CronV2("Cleanup", {
  schedule: "rate(1 minute)",
  function: { handler: "functions/cleanup.handler", timeout: "50 seconds", link: [table], environment: env },
});

/** Fires recurring schedules (the leader lease keeps overlapping runs from doubling work). */
export const cron = new sst.aws.CronV2("Cron", {
  schedule: "rate(1 minute)",
  function: { handler: "functions/cron.handler", timeout: "50 seconds", link, environment: env },
});
