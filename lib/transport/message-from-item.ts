import { resentFields } from "../store/job-field-copies.ts";
import type { JobItem } from "../store/job-item.ts";
import { STORED_FORMATS } from "../store/stored-formats.ts";
import type { JobMessage } from "./job-message.ts";

/**
 * Rebuilds a job's message from its item, for sends that happen after enqueue (redrive, promotion):
 * the fields every message carries (lib/store/job-fields.ts). `payloadJson`: the payload loaded from
 * the item's own store; a claim-checked payload travels as its key.
 */
export function messageFromItem(item: JobItem, payloadJson: string | undefined): JobMessage {
  const payload = item.payloadObject ? undefined : (payloadJson ?? "null");
  return { v: STORED_FORMATS.message, ...resentFields({ ...item, payload }) };
}
