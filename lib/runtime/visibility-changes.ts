import type { Log } from "../observability/log.ts";
import type { SqsTransport, VisibilityChange } from "../transport/sqs-transport.ts";

/** Where a record processor sends the visibility a message it keeps on the queue should get. */
export interface VisibilitySink {
  change(queue: string, receiptHandle: string, seconds: number): Promise<void>;
}

/** One ChangeMessageVisibility per message, at once: the pool's way, where each message ends alone. */
export const immediateVisibility = (transport: Pick<SqsTransport, "changeVisibility">): VisibilitySink => ({
  change: (queue, receiptHandle, seconds) => transport.changeVisibility(queue, receiptHandle, seconds),
});

/**
 * The visibility changes of one worker invocation (retries' backoffs, hand-backs, deferred
 * duplicates), sent together when its records are done: one ChangeMessageVisibilityBatch per ten
 * messages instead of one request each (docs/architecture.md §11). A change SQS refuses leaves the
 * message with the visibility the batch hold gave it (about a lease): it comes back a little early
 * or late, never lost.
 */
export class VisibilityBatch implements VisibilitySink {
  private readonly byQueue = new Map<string, VisibilityChange[]>();

  private readonly transport: Pick<SqsTransport, "changeVisibilityBatch">;
  private readonly log: Log;

  constructor(transport: Pick<SqsTransport, "changeVisibilityBatch">, log: Log) {
    this.transport = transport;
    this.log = log;
  }

  async change(queue: string, receiptHandle: string, seconds: number): Promise<void> {
    const list = this.byQueue.get(queue) ?? [];
    list.push({ id: receiptHandle, receiptHandle, seconds });
    this.byQueue.set(queue, list);
  }

  async flush(): Promise<void> {
    const pending = [...this.byQueue];
    this.byQueue.clear();
    await Promise.all(
      pending.map(async ([queue, changes]) => {
        const failures = await this.transport.changeVisibilityBatch(queue, changes);
        if (failures.length > 0) {
          this.log.warn("some visibility changes were refused; those messages return after their hold", {
            queue,
            refused: failures.length,
            code: failures[0]?.code,
          });
        }
      }),
    );
  }
}
