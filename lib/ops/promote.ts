import type { Engine } from "../services/engine-services.ts";
import { markQueued } from "../store/enqueue-ops.ts";
import type { JobItem } from "../store/job-item.ts";
import { loadPayload } from "../store/read-ops.ts";
import { messageFromItem } from "../transport/message-from-item.ts";
import type { OutgoingJob } from "../transport/sqs-transport.ts";

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
  deps: Pick<Engine, "store" | "transport" | "clock">,
  item: JobItem,
): Promise<{ payload: string; queued: boolean }> {
  const outgoing = await outgoingJob(deps, item);
  await deps.transport.send(outgoing);
  const queued = await markQueued(deps.store, item.id, item.runAt);
  return { payload: outgoing.message.payload, queued };
}

/** A held job's message, delayed until its runAt (SQS clamps to its 15 minutes). */
export async function outgoingJob(
  deps: Pick<Engine, "store" | "clock">,
  item: JobItem,
): Promise<OutgoingJob> {
  const payload = (await loadPayload(deps.store, item)) ?? "null";
  return {
    message: messageFromItem(item, payload),
    delaySeconds: Math.max(0, (item.runAt - deps.clock.now()) / 1000),
  };
}
