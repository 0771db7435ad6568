import type { SQSBatchResponse, SQSEvent } from "aws-lambda";
import pLimit from "p-limit";
import { RecordProcessor, type WorkerDeps } from "./process-record.ts";

export interface WorkerOptions {
  /** Records of one batch processed at the same time. */
  recordConcurrency: number;
}

/**
 * The SQS worker: records run concurrently under a bound; the answer lists the records to keep on
 * the queue (partial batch response). An unexpected error fails only its own record.
 */
export function createWorker(deps: WorkerDeps, options: WorkerOptions) {
  const processor = new RecordProcessor(deps);
  return async (event: SQSEvent): Promise<SQSBatchResponse> => {
    const limit = pLimit(Math.max(1, options.recordConcurrency));
    const failures: { itemIdentifier: string }[] = [];
    await Promise.all(
      event.Records.map((record) =>
        limit(async () => {
          try {
            const ack = await processor.process({
              messageId: record.messageId,
              body: record.body,
              receiptHandle: record.receiptHandle,
            });
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
    deps.metrics.flush();
    return { batchItemFailures: failures };
  };
}
