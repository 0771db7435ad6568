import type { SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import pLimit from "p-limit";
import { type JobMessage, parseJobMessage } from "../transport/job-message.ts";
import { RecordProcessor } from "./process-record.ts";
import type { WorkerDeps } from "./record-types.ts";
import { UnstartedMessages } from "./unstarted-messages.ts";
import { VisibilityBatch } from "./visibility-changes.ts";

export interface WorkerOptions {
  /** Records of one batch processed at the same time. */
  recordConcurrency: number;
}

/**
 * The SQS worker: records run concurrently under a bound; the answer lists the records to keep on
 * the queue (partial batch response). An unexpected error fails only its own record.
 *
 * Before any record runs, the whole batch is hidden for about one lease in one batched request,
 * and records waiting for a slot are kept hidden while they wait, so a worker that crashes, runs
 * out of memory or times out gives its jobs back within a lease instead of the queue's visibility
 * timeout (docs/architecture.md §6).
 */
export function createWorker(deps: WorkerDeps, options: WorkerOptions) {
  const processor = new RecordProcessor(deps);
  return async (event: SQSEvent): Promise<SQSBatchResponse> => {
    const limit = pLimit(Math.max(1, options.recordConcurrency));
    const failures: { itemIdentifier: string }[] = [];
    const parsed = event.Records.map((record) => ({ record, message: parseJobMessage(record.body) }));
    const { holds, holdOf } = unstartedByQueue(deps, parsed);
    const visibility = new VisibilityBatch(deps.transport, deps.log);
    await Promise.all(
      holds.map(({ messages, records }) =>
        messages.hold(records.map((r) => ({ messageId: r.messageId, receiptHandle: r.receiptHandle }))),
      ),
    );
    try {
      await Promise.all(
        parsed.map(({ record, message }) =>
          limit(async () => {
            try {
              await holdOf.get(record.receiptHandle)?.messages.release(record.receiptHandle);
              const ack = await processor.process(
                {
                  messageId: record.messageId,
                  body: record.body,
                  receiptHandle: record.receiptHandle,
                  receiveCount: Number(record.attributes?.ApproximateReceiveCount ?? 1),
                },
                message,
                visibility,
              );
              if (!ack) failures.push({ itemIdentifier: record.messageId });
            } catch (err) {
              deps.log.error("record failed unexpectedly; SQS will redeliver it", {
                messageId: record.messageId,
                error: err instanceof Error ? err.message : String(err),
              });
              failures.push({ itemIdentifier: record.messageId });
            }
          }),
        ),
      );
    } finally {
      await Promise.all(holds.map(({ messages }) => messages.stop()));
      // After the holds stopped, so that no hold overrides a retry's backoff.
      await visibility.flush().catch((err) =>
        deps.log.warn("visibility changes failed; those messages return after their hold", {
          error: String(err),
        }),
      );
    }
    deps.metrics.flush();
    return { batchItemFailures: failures };
  };
}

interface QueueHold {
  messages: UnstartedMessages;
  records: SQSRecord[];
}

/**
 * The batch's records grouped by their job's queue (one queue per event on Lambda), and each
 * record's group by receipt handle. A record that is not a job for a declared queue is ended by the
 * processor at once and needs no hold.
 */
function unstartedByQueue(
  deps: WorkerDeps,
  records: readonly { record: SQSRecord; message: JobMessage | undefined }[],
): { holds: QueueHold[]; holdOf: Map<string, QueueHold> } {
  const byQueue = new Map<string, QueueHold>();
  const byHandle = new Map<string, QueueHold>();
  for (const { record, message } of records) {
    // Only the fenced lane pays for the hold (docs/architecture.md §16): the others rely on the
    // queue's visibility timeout when their worker dies.
    if (message?.lane) continue;
    const queueName = message?.queue;
    const declared = deps.queues.find((q) => q.name === queueName);
    if (!declared) continue;
    let hold = byQueue.get(declared.name);
    if (!hold) {
      hold = {
        messages: new UnstartedMessages({
          transport: deps.transport,
          queue: declared.name,
          leaseMs: declared.leaseSeconds * 1000,
          log: deps.log,
        }),
        records: [],
      };
      byQueue.set(declared.name, hold);
    }
    hold.records.push(record);
    byHandle.set(record.receiptHandle, hold);
  }
  return { holds: [...byQueue.values()], holdOf: byHandle };
}
