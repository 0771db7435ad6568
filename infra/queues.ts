import { queues as declarations, tierOf, visibilityTimeoutSeconds } from "../lib/queues";
import { table } from "./storage";

/** One queue + DLQ per declaration in lib/queues.ts; a worker for each Lambda-tier one. */
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
export const dlqUrls = $jsonStringify(Object.fromEntries(queues.map((q) => [q.declaration.name, q.dlq.url])));

// Pool-tier queues (heavy kinds) have no Lambda worker: the Fargate pool long-polls them.
const lambdaQueues = queues.filter((q) => tierOf(q.declaration) === "lambda");
export const subscriptions = lambdaQueues.map(({ declaration: q, queue }) => {
  const subscriber = queue.subscribe(
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
  return { name: q.name, mapping: subscriber.nodes.eventSourceMapping };
});

/** queue name → event source mapping UUID: what pause, resume and concurrency changes act on. */
export const eventSourceMappings = $jsonStringify(
  Object.fromEntries(subscriptions.map((s) => [s.name, s.mapping.uuid])),
);
/** Only the queue-controlling functions may update these mappings, and only these. */
export const eventSourceMappingPermission = {
  actions: ["lambda:UpdateEventSourceMapping", "lambda:GetEventSourceMapping"],
  resources: subscriptions.map((s) => s.mapping.arn),
};

function pascal(name: string): string {
  return name.replace(/(^|-)(\w)/g, (_m, _d, c: string) => c.toUpperCase());
}
