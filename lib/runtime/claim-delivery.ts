import { randomBytes } from "node:crypto";
import { isTerminal } from "../job/status.ts";
import { MAX_VISIBILITY_SECONDS } from "../limits.ts";
import { jobFields } from "../observability/log.ts";
import type { JobItem } from "../store/job-item.ts";
import { checkFormat } from "../store/stored-formats.ts";
import { type JobMessage, seedFromMessage } from "../transport/job-message.ts";
import type { Admitted, Claimed } from "./delivery.ts";
import { recordEndInGroups } from "./group-end.ts";
import { claimFitting } from "./oversized-ends.ts";
import type { Ack, InboundRecord, WorkerDeps } from "./record-types.ts";
import type { VisibilitySink } from "./visibility-changes.ts";

/**
 * Takes the job for one attempt under a fresh fence. result: the claimed job and its delivery; or,
 * when the claim lost, the Ack its current state calls for (deferred, dropped, repaired).
 */
export async function claimDelivery(
  deps: WorkerDeps,
  { msg, queue }: Admitted,
  record: InboundRecord,
  visibility: VisibilitySink,
): Promise<Ack | Claimed> {
  const { clock, metrics, log } = deps;
  if (msg.after?.length && (await deps.coalesce.waitForEarlierJobs(msg, record, visibility))) {
    // A place it was handed from a line goes on: the earlier job it waits for may wait for that place.
    await deps.flow.leavePlacesToWait(msg);
    return false;
  }
  const gated = await deps.flow.gate(msg, (s) => visibility.change(msg.queue, record.receiptHandle, s));
  if (typeof gated === "boolean") return gated;
  const fence = randomBytes(12).toString("base64url");
  const leaseMs = queue.leaseSeconds * 1000;
  const claimed = await claimFitting(deps, seedFromMessage(msg), fence, leaseMs, deps.runner?.(), queue);
  if (!claimed.claimed) {
    // A place this delivery took goes back unless the job runs under another's live lease (its own).
    if (claimed.current?.status !== "running") await deps.flow.releasePlace(gated, msg.id);
    return notClaimed(deps, msg, claimed.current, record, visibility);
  }

  const item = claimed.item;
  deps.realtime?.running(item);
  const now = clock.now();
  metrics.count("started", item.queue, item.kind);
  metrics.time("queueLatency", item.queue, item.kind, Math.max(0, now - item.runAt));
  if (item.claimedFrom === "running") {
    metrics.count("revived", item.queue, item.kind);
    log.info("took over a job whose lease expired", jobFields(item, item.attempts));
  }
  // Common under load (the message goes out before the item write), and the recovery path when the
  // enqueue died in between: either way the claim built the job from its message.
  if (item.claimedFrom === "missing")
    log.debug("claimed before the enqueue's item write landed", jobFields(item));
  // A completion job is enqueued by the write that saw its group's last child recorded.
  if (item.completes && item.claimedFrom !== "running")
    metrics.time("groupCompletionLag", item.queue, item.kind, Math.max(0, now - item.createdAt));
  return { item, delivery: { msg, record, queue, fence, leaseMs, visibility, flow: gated } };
}

/** A claim that lost: decide from the job's current state what to do with this delivery. */
async function notClaimed(
  deps: WorkerDeps,
  msg: JobMessage,
  current: JobItem | undefined,
  record: InboundRecord,
  visibility: VisibilitySink,
): Promise<Ack> {
  const { clock, metrics, log } = deps;
  const now = clock.now();
  // A job a newer version wrote (a rollback): the claim left it alone, and so does this delivery,
  // which fails with the reason and stays in the queue for that version (docs/architecture.md §24).
  if (current) checkFormat("job", current, `job ${current.id}`);
  if (!current || isTerminal(current.status)) {
    if (current) metrics.count("duplicateDeliveries", msg.queue, msg.kind);
    // A crash between the finalize and the group's record leaves the message: this delivery repairs it.
    return current ? recordEndInGroups(deps, current) : true;
  }
  if (current.status === "running") {
    // Another worker holds a live lease: come back when it would have expired, never run alongside.
    metrics.count("duplicateDeliveries", msg.queue, msg.kind);
    log.info("duplicate delivery of a running job; deferring it", jobFields(msg));
    await visibility.change(msg.queue, record.receiptHandle, ((current.leaseUntil ?? now) - now) / 1000 + 1);
    return false;
  }
  if (current.status === "scheduled" && current.runAt - now > MAX_VISIBILITY_SECONDS * 1000) return true;
  await visibility.change(msg.queue, record.receiptHandle, (current.runAt - now) / 1000);
  return false;
}
