import type { SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import pLimit from "p-limit";
import { isBatchKind } from "../job/batch.ts";
import { agedArrival } from "../job/priority.ts";
import { errorFields } from "../observability/log.ts";
import { type JobMessage, parseJobMessage } from "../transport/job-message.ts";
import type { KeyedRecords } from "./process-batch.ts";
import { RecordProcessor } from "./process-record.ts";
import type { InboundRecord, WorkerDeps } from "./record-types.ts";
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
 * and records waiting for their turn are kept hidden while they wait, so a worker that crashes, runs
 * out of memory or times out gives its jobs back within a lease instead of the queue's visibility
 * timeout (docs/architecture.md §6).
 */
export function createWorker(deps: WorkerDeps, options: WorkerOptions) {
  const processor = new RecordProcessor(deps);
  return async (event: SQSEvent): Promise<SQSBatchResponse> => {
    const limit = pLimit(Math.max(1, options.recordConcurrency));
    const failures: { itemIdentifier: string }[] = [];
    const parsed = inPriorityOrder(
      event.Records.map((record) => ({ record, message: parseJobMessage(record.body) })),
    );
    const { holds, holdOf } = unstartedByQueue(deps, parsed);
    const visibility = new VisibilityBatch(deps.transport, deps.log);
    await Promise.all(
      holds.map(({ messages, records }) =>
        messages.hold(records.map((r) => ({ messageId: r.messageId, receiptHandle: r.receiptHandle }))),
      ),
    );
    const { singles, keys } = callsByBatchKey(deps, parsed);
    const failed = (messageId: string, err: unknown) => {
      deps.log.error("record failed unexpectedly; SQS will redeliver it", {
        messageId,
        ...errorFields(err),
      });
      failures.push({ itemIdentifier: messageId });
    };
    try {
      await Promise.all([
        ...singles.map(({ record, message }) =>
          limit(async () => {
            try {
              await holdOf.get(record.receiptHandle)?.messages.release(record.receiptHandle);
              const ack = await processor.process(inbound(record), message, visibility);
              if (!ack) failures.push({ itemIdentifier: record.messageId });
            } catch (err) {
              failed(record.messageId, err);
            }
          }),
        ),
        // A key's calls run one after another in one place of the record bound: the key's own
        // concurrency bound is the cluster's (its call permits), not a reason to defer this delivery's rest.
        ...keys.map((calls) =>
          limit(async () => {
            for (const call of calls) {
              try {
                for (const { record } of call.records)
                  await holdOf.get(record.receiptHandle)?.messages.release(record.receiptHandle);
                const acks = await processor.processKeyedBatch(call, visibility);
                for (const { record } of call.records)
                  if (acks.get(record.messageId) !== true)
                    failures.push({ itemIdentifier: record.messageId });
              } catch (err) {
                for (const { record } of call.records) failed(record.messageId, err);
              }
            }
          }),
        ),
      ]);
    } finally {
      await Promise.all(holds.map(({ messages }) => messages.stop()));
      // After the holds stopped, so that no hold overrides a retry's backoff.
      await visibility
        .flush()
        .catch((error: unknown) =>
          deps.log.warn(
            "visibility changes failed; those messages return after their hold",
            errorFields(error),
          ),
        );
    }
    deps.metrics.flush();
    return { batchItemFailures: failures };
  };
}

/**
 * The batch's records, the higher priority first, aged as a flow key's line ages them (lib/job/priority.ts):
 * with more records than recordConcurrency, they start in this order. A record that is no job keeps
 * its place at the end (it is ended at once); ties keep SQS's order.
 */
function inPriorityOrder<T extends { message: JobMessage | undefined }>(records: T[]): T[] {
  const at = (r: T) => (r.message ? agedArrival(r.message.createdAt, r.message.priority) : Infinity);
  return records
    .map((r, i) => ({ r, i, at: at(r) }))
    .sort((a, b) => a.at - b.at || a.i - b.i)
    .map(({ r }) => r);
}

const inbound = (record: SQSRecord): InboundRecord => ({
  messageId: record.messageId,
  body: record.body,
  receiptHandle: record.receiptHandle,
  receiveCount: Number(record.attributes?.ApproximateReceiveCount ?? 1),
});

/**
 * The batch's records of batch kinds, sorted by kind and key into calls of at most maxSize, in
 * priority order (inPriorityOrder), one list of calls per key (docs/architecture.md §18); every
 * other record runs alone.
 */
function callsByBatchKey(
  deps: WorkerDeps,
  parsed: readonly { record: SQSRecord; message: JobMessage | undefined }[],
): {
  singles: { record: SQSRecord; message: JobMessage | undefined }[];
  keys: KeyedRecords[][];
} {
  const singles: { record: SQSRecord; message: JobMessage | undefined }[] = [];
  const byKey = new Map<string, KeyedRecords>();
  for (const entry of parsed) {
    const { message } = entry;
    const kind = message ? deps.registry.get(message.kind) : undefined;
    if (!message || message.batchKey === undefined || !kind || !isBatchKind(kind)) {
      singles.push(entry);
      continue;
    }
    const id = `${kind.name}\u0000${message.batchKey}`;
    const keyed = byKey.get(id) ?? { kind, key: message.batchKey, records: [] };
    keyed.records.push({ record: inbound(entry.record), msg: message });
    byKey.set(id, keyed);
  }
  const keys = [...byKey.values()].map((keyed) => {
    const size = keyed.kind.batch.settings.maxSize;
    const chunks: KeyedRecords[] = [];
    for (let i = 0; i < keyed.records.length; i += size)
      chunks.push({ ...keyed, records: keyed.records.slice(i, i + size) });
    return chunks;
  });
  return { singles, keys };
}

interface QueueHold {
  messages: UnstartedMessages;
  records: SQSRecord[];
}

/**
 * The batch's records held per job's queue (one queue per event on Lambda), and each
 * record's hold by receipt handle. A record that is not a job for a declared queue is ended by the
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
