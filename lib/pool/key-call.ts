import type { BatchKindDefinition } from "../job/batch.ts";
import { processKeyedBatch } from "../runtime/process-batch.ts";
import type { RecordProcessor } from "../runtime/process-record.ts";
import type { WorkerDeps } from "../runtime/record-types.ts";
import type { UnstartedMessages } from "../runtime/unstarted-messages.ts";
import { VisibilityBatch } from "../runtime/visibility-changes.ts";
import type { KeyedWaiting } from "./pool-batches.ts";
import { currentChild, type ReservedChild } from "./reserved-child.ts";

/** One call of a batch kind's key, on the child reserved for it. */
export interface KeyCall {
  kind: BatchKindDefinition;
  queue: string;
  key: string;
  items: readonly KeyedWaiting[];
}

/**
 * Runs a key's call on its reserved child: the items stop being held (each run's heartbeat keeps
 * it hidden from here), then are claimed, run in one batch request and finalized each under its own
 * fence (processKeyedBatch). Items whose job is finished with are deleted ten per request; the rest
 * keep the visibility their outcome gave them, set in batches too.
 */
export async function runKeyCall(
  deps: WorkerDeps,
  processor: RecordProcessor,
  unstarted: UnstartedMessages,
  reserved: ReservedChild,
  call: KeyCall,
): Promise<void> {
  const { kind, queue, key, items } = call;
  await Promise.all(items.map((w) => unstarted.release(w.record.receiptHandle)));
  const records = items.flatMap((w) => (w.message ? [{ record: w.record, msg: w.message }] : []));
  const visibility = new VisibilityBatch(deps.transport, deps.log);
  const acks = await currentChild.run(reserved, () =>
    processKeyedBatch(deps, processor, { kind, key, records }, visibility),
  );
  const done = items.filter((w) => acks.get(w.record.messageId)).map((w) => w.record.receiptHandle);
  const [, failed] = await Promise.all([
    visibility.flush(),
    done.length > 0 ? deps.transport.deleteBatch(queue, done) : 0,
  ]);
  if (failed > 0)
    deps.log.warn("some finished messages were not deleted; they come back as duplicates", {
      queue,
      failed,
    });
}
