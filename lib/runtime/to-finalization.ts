import type { QueueDeclaration } from "../declarations/queue-declaration.ts";
import { retentionExpiry } from "../retention.ts";
import type { Finalization } from "../store/finalize-ops.ts";
import type { Decision } from "./outcome.ts";

/** What the store records for a decision: terminal outcomes get the queue's retention as their TTL. */
export function toFinalization(
  d: Exclude<Decision, { outcome: "abandon" }>,
  queue: QueueDeclaration,
  now: number,
): Finalization {
  switch (d.outcome) {
    case "done":
      return {
        outcome: "done",
        result: { json: d.result },
        expiresAt: retentionExpiry(now, queue.retentionDays.done),
      };
    case "dead":
      return { outcome: "dead", error: d.error, expiresAt: retentionExpiry(now, queue.retentionDays.dead) };
    case "cancelled":
      return {
        outcome: "cancelled",
        expiresAt: retentionExpiry(now, queue.retentionDays.dead),
        ...(d.error ? { error: d.error } : {}),
      };
    case "retry":
      return { outcome: "retry", runAt: now + d.delaySeconds * 1000, error: d.error };
    case "reschedule":
      return { outcome: "reschedule", runAt: now + d.delaySeconds * 1000, error: d.error };
    case "throttled":
      return { outcome: "throttled", runAt: now + d.delaySeconds * 1000, reason: d.reason };
    case "released":
      return { outcome: "released", runAt: now };
  }
}
