import { createHash } from "node:crypto";
import { encodeFlowKey, flowKeyOf } from "../job/flow-key.ts";
import { encodeMessageBody, type JobMessage } from "./job-message.ts";

/** SQS takes at most this many entries in one batch request. */
export const SQS_BATCH = 10;

/** A job's message on its way out, and how long SQS holds it back first. */
export interface OutgoingJob {
  message: JobMessage;
  delaySeconds: number;
}

/**
 * A flow-controlled job's message names its key (its text, `<kind>#<key>`) as its MessageGroupId: on a standard queue that is
 * what SQS fair queues balance by, so one tenant's backlog doesn't hold the others' messages back
 * in the queue itself either (docs/guide/flow-control.md). No extra request or charge. SQS takes at most
 * 128 characters of letters, digits and punctuation: any other key goes as its SHA-256.
 */
export function fairGroup(message: JobMessage): { MessageGroupId?: string } {
  const fk = flowKeyOf(message);
  if (fk === undefined) return {};
  const group = encodeFlowKey(fk);
  const usable = group.length <= 128 && /^[\x21-\x7e]+$/.test(group);
  return { MessageGroupId: usable ? group : createHash("sha256").update(group).digest("hex") };
}

/** SQS's limit on one SendMessageBatch's total body size, less headroom for the envelope. */
const MAX_BATCH_BYTES = 250 * 1024;

/** Splits jobs into SendMessageBatch requests: at most ten entries and MAX_BATCH_BYTES each. */
export function chunkForBatch(jobs: readonly OutgoingJob[]): (OutgoingJob & { body: string })[][] {
  const chunks: (OutgoingJob & { body: string })[][] = [];
  let current: (OutgoingJob & { body: string })[] = [];
  let bytes = 0;
  for (const job of jobs) {
    const body = encodeMessageBody(job.message);
    const size = Buffer.byteLength(body);
    if (current.length === SQS_BATCH || (current.length > 0 && bytes + size > MAX_BATCH_BYTES)) {
      chunks.push(current);
      current = [];
      bytes = 0;
    }
    current.push({ ...job, body });
    bytes += size;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}
