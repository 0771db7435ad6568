import type { RealtimeService } from "../services/realtime-service.ts";
import type { JobItem } from "../store/job-item.ts";

/**
 * The realtime call for the status a run's finalize wrote (docs/architecture.md §25): back in line
 * (a retry, a throttle, a hand-back), waiting (a durable sleep or wait), paused, or ended.
 */
export function publishSettled(realtime: RealtimeService | undefined, item: JobItem): void {
  if (!realtime) return;
  if (item.status === "done" || item.status === "dead" || item.status === "cancelled") realtime.ended(item);
  else if (item.status === "paused") realtime.paused(item);
  else if (item.status === "scheduled" && item.waiting) realtime.waiting(item);
  else if (item.status === "running") realtime.running(item);
  else realtime.queued(item);
}
