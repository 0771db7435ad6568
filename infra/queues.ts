import { queues as declarations, visibilityTimeoutSeconds } from "../lib/queues";
import { table } from "./storage";

/** One queue + DLQ + worker per declaration in lib/queues.ts. */
export const queues = declarations.map((q) => {
  const dlq = new sst.aws.Queue(`${pascal(q.name)}Dlq`, { visibilityTimeout: "12 hours" });
  const queue = new sst.aws.Queue(`${pascal(q.name)}Queue`, {
    visibilityTimeout: `${visibilityTimeoutSeconds(q)} seconds`,
    dlq: { queue: dlq.arn, retry: q.maxReceiveCount },
  });
  return { declaration: q, queue, dlq };
});

export const queueUrls = $jsonStringify(
  Object.fromEntries(queues.map((q) => [q.declaration.name, q.queue.url])),
);

for (const { declaration: q, queue } of queues) {
  queue.subscribe(
    {
      handler: "functions/worker.handler",
      timeout: `${q.workerTimeoutSeconds} seconds`,
      memory: "512 MB",
      link: [table, ...queues.map((x) => x.queue)],
      environment: {
        SKYFORGE_TABLE: table.name,
        SKYFORGE_QUEUE_URLS: queueUrls,
        SKYFORGE_WORKER_QUEUE: q.name,
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
}

function pascal(name: string): string {
  return name.replace(/(^|-)(\w)/g, (_m, _d, c: string) => c.toUpperCase());
}
