import { tierOf } from "../lib/declarations/queue-declaration";
import { apiUrl } from "./api-gateway";
import { permissionsFor } from "./permissions";
import { queues, queueUrls } from "./queues";
import { storage } from "./storage-env";

/**
 * One worker function per Lambda-tier queue, subscribed with partial batch responses, the declared
 * batch size and window, and the declared ESM maximum concurrency (PATCH /queues changes it later).
 */
export const workers = queues
  .filter((q) => tierOf(q.declaration) === "lambda")
  .map(({ declaration: q, queue }) => {
    const subscriber = queue.subscribe(
      {
        handler: "functions/worker.handler",
        timeout: `${q.workerTimeoutSeconds} seconds`,
        memory: "512 MB",
        permissions: permissionsFor("worker", [q.name]),
        environment: {
          ...storage,
          SKYFORGE_QUEUE_URLS: queueUrls,
          SKYFORGE_WORKER_QUEUE: q.name,
          ...apiUrl,
        },
      },
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
      functionName: subscriber.nodes.function.name,
      mapping: subscriber.nodes.eventSourceMapping,
    };
  });

/** queue name → event source mapping UUID: what pause, resume and concurrency changes act on. */
export const eventSourceMappings = $jsonStringify(
  Object.fromEntries(workers.map((w) => [w.queue, w.mapping.uuid])),
);
/** The mappings' ARNs: the only resources queue-controlling functions may update. */
export const mappingArns = new Map(workers.map((w) => [w.queue, w.mapping.arn]));
