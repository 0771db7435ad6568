import { permissionsFor } from "./permissions";
import { poolConfigEnv, poolConfigFiles } from "./pool-config";
import { dlqUrls, queueUrls } from "./queues";
import { storage } from "./storage-env";
import { eventSourceMappings, mappingArns } from "./workers";

/** Promotes scheduled jobs, drains DLQs, repairs event sources to the recorded pause/concurrency. */
export const reaper = new sst.aws.CronV2("Reaper", {
  schedule: "rate(1 minute)",
  function: {
    handler: "functions/reaper.handler",
    timeout: "50 seconds",
    permissions: permissionsFor("reaper", [], mappingArns),
    environment: {
      ...storage,
      SKYFORGE_QUEUE_URLS: queueUrls,
      SKYFORGE_DLQ_URLS: dlqUrls,
      SKYFORGE_EVENT_SOURCE_MAPPINGS: eventSourceMappings,
    },
  },
});

/** Purges dead jobs past retention; TTL removes done and cancelled ones. */
export const cleanup = new sst.aws.CronV2("Cleanup", {
  schedule: "rate(1 minute)",
  function: {
    handler: "functions/cleanup.handler",
    timeout: "50 seconds",
    permissions: permissionsFor("cleanup"),
    environment: { ...storage, SKYFORGE_QUEUE_URLS: queueUrls },
  },
});

/** Fires recurring schedules (the leader lease keeps overlapping runs from doubling work). */
export const cron = new sst.aws.CronV2("Cron", {
  schedule: "rate(1 minute)",
  function: {
    handler: "functions/cron.handler",
    timeout: "50 seconds",
    permissions: permissionsFor("cron"),
    // Cron enqueues through the registry, so it must know the operator's pool kinds too.
    environment: { ...storage, SKYFORGE_QUEUE_URLS: queueUrls, ...poolConfigEnv },
    copyFiles: poolConfigFiles,
  },
});
