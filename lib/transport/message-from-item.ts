import type { JobItem } from "../store/job-item.ts";
import { STORED_FORMATS } from "../store/stored-formats.ts";
import type { JobMessage } from "./job-message.ts";

/**
 * Rebuilds a job's message from its item, for sends that happen after enqueue (redrive, promotion).
 * `payloadJson`: the payload loaded from the item's own store; a claim-checked payload travels as its key.
 */
export function messageFromItem(item: JobItem, payloadJson: string | undefined): JobMessage {
  return {
    v: STORED_FORMATS.message,
    id: item.id,
    kind: item.kind,
    queue: item.queue,
    maxAttempts: item.maxAttempts,
    priority: item.priority,
    createdAt: item.createdAt,
    runAt: item.runAt,
    ...(item.payloadObject ? { payloadObject: item.payloadObject } : { payload: payloadJson ?? "null" }),
    ...(item.timeoutSeconds !== undefined ? { timeoutSeconds: item.timeoutSeconds } : {}),
    ...(item.startBy !== undefined ? { startBy: item.startBy } : {}),
    ...(item.uniqueKey !== undefined ? { uniqueKey: item.uniqueKey } : {}),
    ...(item.payloadRef ? { payloadRef: true } : {}),
    ...(item.batchKey !== undefined ? { batchKey: item.batchKey } : {}),
    ...(item.inBacklog ? { inBacklog: true } : {}),
    ...(item.coalesceKey !== undefined ? { coalesceKey: item.coalesceKey } : {}),
    ...(item.after?.length ? { after: item.after } : {}),
    ...(item.flowKey !== undefined ? { flowKey: item.flowKey } : {}),
    ...(item.replayOf !== undefined ? { replayOf: item.replayOf } : {}),
    ...(item.trace !== undefined ? { trace: item.trace } : {}),
  };
}
