import { type Build, childName, childOpts, poolConfigEnv, poolConfigFiles } from "./build";
import { functionArgs } from "./lambda-function";
import { type GrantTargets, permissionsFor } from "./permissions";
import { scheduleTrust } from "./role-trust";
import { transformed } from "./skyforge-args";
import type { Workers } from "./workers";

/** The three functions EventBridge Scheduler runs every minute. */
export function createSchedules(build: Build, targets: GrantTargets, workers: Workers) {
  const { storage, queues } = targets;
  const every = (part: string, fn: sst.aws.FunctionArgs) => {
    const name = childName(build, part);
    const args = transformed(
      build.args.transform?.schedule,
      name,
      { schedule: "rate(1 minute)", function: functionArgs(build, `${part}Handler`, fn) },
      childOpts(build),
    );
    return new sst.aws.CronV2(name, scheduleTrust(args), childOpts(build));
  };

  /** Promotes scheduled jobs, drains DLQs, repairs event sources to the recorded pause/concurrency. */
  const reaper = every("Reaper", {
    handler: build.handlers.reaper,
    timeout: "50 seconds",
    permissions: permissionsFor(build, targets, "reaper", [], workers.mappingArns),
    environment: {
      ...storage.env,
      SKYFORGE_QUEUE_URLS: queues.queueUrls,
      SKYFORGE_DLQ_URLS: queues.dlqUrls,
      SKYFORGE_EVENT_SOURCE_MAPPINGS: workers.eventSourceMappings,
      // A DLQ drain's end and a group's progress are published (docs/architecture.md §25).
      ...targets.realtime.env,
    },
  });

  /** Purges dead jobs past retention; TTL removes done and cancelled ones. */
  const cleanup = every("Cleanup", {
    handler: build.handlers.cleanup,
    timeout: "50 seconds",
    permissions: permissionsFor(build, targets, "cleanup"),
    environment: { ...storage.env, SKYFORGE_QUEUE_URLS: queues.queueUrls },
  });

  /** Fires recurring schedules (the leader lease keeps overlapping runs from doubling work). */
  const cron = every("Cron", {
    handler: build.handlers.cron,
    timeout: "50 seconds",
    permissions: permissionsFor(build, targets, "cron"),
    // Cron enqueues through the registry, so it must know the operator's pool kinds too.
    environment: {
      ...storage.env,
      SKYFORGE_QUEUE_URLS: queues.queueUrls,
      ...poolConfigEnv(build),
      ...targets.realtime.env,
    },
    copyFiles: poolConfigFiles(build),
  });
  return { reaper, cleanup, cron };
}
export type Schedules = ReturnType<typeof createSchedules>;
