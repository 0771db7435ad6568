import type { JobItem } from "../store/job-item.ts";
import type { JobMessage } from "./job-message.ts";

/** Rebuilds a job's message from its item, for sends that happen after enqueue (redrive, promotion). */
export function messageFromItem(item: JobItem, payloadJson: string): JobMessage {
  return {
    v: 1,
    id: item.id,
    kind: item.kind,
    queue: item.queue,
    maxAttempts: item.maxAttempts,
    priority: item.priority,
    createdAt: item.createdAt,
    runAt: item.runAt,
    payload: payloadJson,
    ...(item.timeoutSeconds !== undefined ? { timeoutSeconds: item.timeoutSeconds } : {}),
    ...(item.uniqueKey !== undefined ? { uniqueKey: item.uniqueKey } : {}),
    ...(item.payloadRef ? { payloadRef: true } : {}),
  };
}
