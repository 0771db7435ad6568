import { app } from "../app/index";
import { visibilityTimeoutSeconds } from "../lib/declarations/queue-declaration";
import { pascalCase } from "../lib/deploy-plan/resource-names";
import { MAX_VISIBILITY_SECONDS, QUEUE_MESSAGE_RETENTION_SECONDS } from "../lib/limits";

/**
 * One SQS queue + DLQ per declaration in app/queues.ts, both encrypted at rest with SQS-managed keys.
 * Both keep messages 14 days, the maximum: the main queue so that a paused queue or a long retry
 * chain doesn't lose a job's message while its item says queued (docs/architecture.md §7), the DLQ so
 * that an operator has time to look.
 */
export const queues = app.queues.map((q) => {
  const dlq = new sst.aws.Queue(`${pascalCase(q.name)}Dlq`, {
    visibilityTimeout: `${MAX_VISIBILITY_SECONDS} seconds`,
    transform: {
      queue: { sqsManagedSseEnabled: true, messageRetentionSeconds: QUEUE_MESSAGE_RETENTION_SECONDS },
    },
  });
  const queue = new sst.aws.Queue(`${pascalCase(q.name)}Queue`, {
    visibilityTimeout: `${visibilityTimeoutSeconds(q)} seconds`,
    dlq: { queue: dlq.arn, retry: q.maxReceiveCount },
    transform: {
      queue: { sqsManagedSseEnabled: true, messageRetentionSeconds: QUEUE_MESSAGE_RETENTION_SECONDS },
    },
  });
  return { declaration: q, queue, dlq };
});

export function queueOf(name: string) {
  const found = queues.find((q) => q.declaration.name === name);
  if (!found) throw new Error(`queue ${name} is not declared`);
  return found;
}

export const queueUrls = $jsonStringify(
  Object.fromEntries(queues.map((q) => [q.declaration.name, q.queue.url])),
);
export const dlqUrls = $jsonStringify(Object.fromEntries(queues.map((q) => [q.declaration.name, q.dlq.url])));
