import { visibilityTimeoutSeconds } from "../lib/declarations/queue-declaration";
import { pascalCase } from "../lib/deploy-plan/resource-names";
import { MAX_VISIBILITY_SECONDS, QUEUE_MESSAGE_RETENTION_SECONDS } from "../lib/limits";
import { type Build, childName, childOpts } from "./build";
import { transformed } from "./skyforge-args";

/**
 * One SQS queue + DLQ per declared queue, both encrypted at rest with SQS-managed keys. Both keep
 * messages 14 days, the maximum: the main queue so that a paused queue or a long retry chain doesn't
 * lose a job's message while its item says queued (docs/architecture.md §7), the DLQ so that an
 * operator has time to look.
 */
export function createQueues(build: Build) {
  const kept = { sqsManagedSseEnabled: true, messageRetentionSeconds: QUEUE_MESSAGE_RETENTION_SECONDS };
  const queues = build.app.queues.map((q) => {
    const dlqName = childName(build, `${pascalCase(q.name)}Dlq`);
    const dlq = new sst.aws.Queue(
      dlqName,
      transformed(
        build.args.transform?.dlq,
        dlqName,
        { visibilityTimeout: `${MAX_VISIBILITY_SECONDS} seconds`, transform: { queue: kept } },
        childOpts(build),
      ),
      childOpts(build),
    );
    const queueName = childName(build, `${pascalCase(q.name)}Queue`);
    const queue = new sst.aws.Queue(
      queueName,
      transformed(
        build.args.transform?.queue,
        queueName,
        {
          visibilityTimeout: `${visibilityTimeoutSeconds(q)} seconds`,
          dlq: { queue: dlq.arn, retry: q.maxReceiveCount },
          transform: { queue: kept },
        },
        childOpts(build),
      ),
      childOpts(build),
    );
    return { declaration: q, queue, dlq };
  });

  function queueOf(name: string) {
    const found = queues.find((q) => q.declaration.name === name);
    if (!found) throw new Error(`queue ${name} is not declared`);
    return found;
  }

  return {
    queues,
    queueOf,
    /** queue name → URL, for SKYFORGE_QUEUE_URLS; the DLQs' for SKYFORGE_DLQ_URLS. */
    queueUrls: $jsonStringify(Object.fromEntries(queues.map((q) => [q.declaration.name, q.queue.url]))),
    dlqUrls: $jsonStringify(Object.fromEntries(queues.map((q) => [q.declaration.name, q.dlq.url]))),
  };
}
export type Queues = ReturnType<typeof createQueues>;
