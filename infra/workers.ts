import { tierOf } from "../lib/declarations/queue-declaration";
import { pascalCase } from "../lib/deploy-plan/resource-names";
import { type Build, childName } from "./build";
import { functionArgs } from "./lambda-function";
import { type GrantTargets, permissionsFor } from "./permissions";

/**
 * One worker function per Lambda-tier queue, subscribed with partial batch responses, the declared
 * batch size and window, and the declared ESM maximum concurrency (PATCH /queues changes it later).
 */
export function createWorkers(
  build: Build,
  targets: GrantTargets,
  apiUrl: Record<string, $util.Input<string>>,
) {
  const workers = targets.queues.queues
    .filter((q) => tierOf(q.declaration) === "lambda")
    .map(({ declaration: q, queue }) => {
      const subscriber = queue.subscribe(
        functionArgs(build, `Worker${pascalCase(q.name)}`, {
          handler: build.handlers.worker,
          timeout: `${q.workerTimeoutSeconds} seconds`,
          memory: "512 MB",
          permissions: permissionsFor(build, targets, "worker", [q.name]),
          environment: {
            ...targets.storage.env,
            SKYFORGE_QUEUE_URLS: targets.queues.queueUrls,
            SKYFORGE_WORKER_QUEUE: q.name,
            ...apiUrl,
            ...targets.realtime.env,
          },
        }),
        {
          batch: { size: q.batchSize, window: `${q.batchWindowSeconds} seconds`, partialResponses: true },
          transform: {
            eventSourceMapping: (args) => {
              args.scalingConfig = { maximumConcurrency: q.maxConcurrency };
            },
          },
        },
      );
      return {
        queue: q.name,
        label: childName(build, `Worker${pascalCase(q.name)}`),
        functionName: subscriber.nodes.function.name,
        mapping: subscriber.nodes.eventSourceMapping,
      };
    });
  return {
    workers,
    /** queue name → event source mapping UUID: what pause, resume and concurrency changes act on. */
    eventSourceMappings: $jsonStringify(Object.fromEntries(workers.map((w) => [w.queue, w.mapping.uuid]))),
    /** The mappings' ARNs: the only resources queue-controlling functions may update. */
    mappingArns: new Map(workers.map((w) => [w.queue, w.mapping.arn])),
  };
}
export type Workers = ReturnType<typeof createWorkers>;
