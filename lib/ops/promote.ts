import { loadPayload } from "../claims/job-bodies.ts";
import type { Engine } from "../services/engine-services.ts";
import { markQueued } from "../store/enqueue-ops.ts";
import type { JobItem } from "../store/job-item.ts";
import { messageFromItem } from "../transport/message-from-item.ts";
import type { OutgoingJob } from "../transport/outgoing-messages.ts";

/**
 * How long a promotion holds a scheduled job past its runAt. A reaper that dies between taking the
 * job and sending its message delays it by at most this; a live one is done in milliseconds.
 */
export const PROMOTION_HOLD_MS = 120_000;

export const promotionHoldUntil = (runAt: number, now: number) => Math.max(runAt, now) + PROMOTION_HOLD_MS;

/**
 * The second half of every promotion (reaper and redrive): send the held job's message with the delay
 * left until its runAt, then take it out of the scheduled index. If markQueued loses, a claim or a
 * cancel moved the job first, which is fine: the message is a harmless duplicate at worst.
 */
export async function sendPromoted(
  deps: Pick<Engine, "store" | "claims" | "transport" | "clock">,
  item: JobItem,
): Promise<{ queued: boolean }> {
  await deps.transport.send(await outgoingJob(deps, item));
  return { queued: await markQueued(deps.store, item.id, item.runAt) };
}

/** A held job's message, delayed until its runAt (SQS clamps to its 15 minutes). */
export async function outgoingJob(
  deps: Pick<Engine, "store" | "claims" | "clock">,
  item: JobItem,
): Promise<OutgoingJob> {
  // A claim-checked payload travels as its key: nothing to load.
  const payload = item.payloadObject ? undefined : await loadPayload(deps.store, deps.claims, item);
  return {
    message: messageFromItem(item, payload),
    delaySeconds: Math.max(0, (item.runAt - deps.clock.now()) / 1000),
  };
}
