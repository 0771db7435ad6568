import { claimKey, isClaimKeyOf, needsClaimCheck } from "../claims/claim-keys.ts";
import { type ClaimStore, getClaim, putClaim } from "../claims/claim-store.ts";
import { InvariantError } from "../errors.ts";
import type { JobItem, StoredResult } from "../store/job-item.ts";
import type { JobMessage } from "../transport/job-message.ts";

/**
 * The payload JSON a delivery runs with: the message's own, or its object's in the claims bucket.
 * undefined when the object has expired (the job waited longer than its queue keeps it). Only the
 * job's own object is ever read: parseJobMessage refuses a message naming another key, and this
 * checks again, so no path that builds a JobMessage some other way can fetch a foreign object.
 */
export async function deliveredPayload(claims: ClaimStore, msg: JobMessage): Promise<string | undefined> {
  if (!msg.payloadObject) return msg.payload;
  if (!isClaimKeyOf(msg.payloadObject, msg.id, "payload")) {
    throw new InvariantError(
      `job ${msg.id}: payloadObject ${msg.payloadObject} is not its own payload object`,
    );
  }
  return getClaim(claims, msg.payloadObject);
}

/**
 * The payload a claimed job runs with. A debounced or singleton job's lives in its item, where a
 * later enqueue of its key may have revised it (a collect burst's: all of them, in enqueue order);
 * the item came back with the claim, so this costs no read. Any other job's is its message's.
 */
export async function runPayload(
  claims: ClaimStore,
  item: JobItem,
  msg: JobMessage,
): Promise<string | readonly string[] | undefined> {
  if (item.coalesceKey === undefined) return deliveredPayload(claims, msg);
  if (item.burst?.length) return item.burst;
  return item.payload ?? deliveredPayload(claims, msg);
}

/**
 * A success's result as it will be stored: over the claim check's threshold it is written to the
 * claims bucket first, under the attempt's own key (a run that lost its lease never overwrites the
 * object its job points to), kept as long as the finished job (`expiresAt`, epoch seconds).
 */
export async function stowResult(
  claims: ClaimStore,
  job: { id: string; attempt: number },
  result: StoredResult,
  now: number,
  expiresAt: number,
): Promise<StoredResult> {
  if (!("json" in result) || !needsClaimCheck(result.json)) return result;
  const key = claimKey(job.id, `result-${job.attempt}`, now, expiresAt * 1000);
  await putClaim(claims, key, result.json);
  return { object: key };
}
