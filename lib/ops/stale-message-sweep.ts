import pLimit from "p-limit";
import { MAX_VISIBILITY_SECONDS } from "../limits.ts";
import { jobFields } from "../observability/log.ts";
import type { Engine } from "../services/engine-services.ts";
import { markResent, type SweptJob, scanStaleJobs } from "../store/stale-message-ops.ts";
import { outgoingJob } from "./promote.ts";

const DAY_MS = 86_400_000;
/**
 * SQS drops a message 14 days after its first send (QUEUE_MESSAGE_RETENTION_SECONDS), retries and
 * all. The sweep sends a fresh message to any job created over 7 days ago that is still queued, and
 * reads the whole table at least every 3 days: each such job gets one by day 10, four days (more than
 * one missed pass) before its old message can go (docs/architecture.md §7).
 */
export const STALE_MESSAGE_AFTER_MS = 7 * DAY_MS;
export const STALE_SWEEP_PASS_MS = 3 * DAY_MS;
/**
 * Slices per pass at most. DynamoDB takes up to 1 000 000 segments, but dynalite splits its keys into
 * 4096 buckets and reads some twice beyond that. With the cap, a pass at one run a minute is 4096
 * minutes (2.8 days), a little inside STALE_SWEEP_PASS_MS.
 */
const MAX_SEGMENTS = 4096;

export interface SweepOptions {
  /** How often the reaper runs (AWS: every minute): each run sweeps 1 / (pass / tick) of the table. */
  tickMs?: number;
  /** How long one pass over the whole table may take. */
  staleSweepPassMs?: number;
  staleMessageAfterMs?: number;
  /** Scan pages (≤ 1 MB each) one run may read; a bigger slice is cut short, and the pass is late. */
  maxStaleSweepPages?: number;
}

export type SweepDeps = Pick<
  Engine,
  "store" | "claims" | "transport" | "queues" | "clock" | "metrics" | "log"
>;

export interface SweepCounts {
  /** Items read this run. */
  scanned: number;
  /** Jobs whose message may have outlived SQS's retention, sent a fresh one. */
  resent: number;
}

/**
 * The stale-message sweep: reads this run's slice of the table (a parallel-scan segment picked by the
 * clock, so a pass needs no stored cursor and two overlapping reapers read the same slice) and sends
 * a fresh message to every job that may have outlived its own. Send first, then mark: a send that
 * fails leaves the job for the next pass, and a mark that loses leaves a duplicate the claim absorbs.
 */
export async function sweepStaleMessages(deps: SweepDeps, options: SweepOptions = {}): Promise<SweepCounts> {
  const counts: SweepCounts = { scanned: 0, resent: 0 };
  const now = deps.clock.now();
  const pass = options.staleSweepPassMs ?? STALE_SWEEP_PASS_MS;
  const slice = staleSweepSlice(now, options.tickMs ?? 60_000, pass);
  const declared = new Set(deps.queues.map((q) => q.name));
  let startKey: Record<string, unknown> | undefined;
  let pages = options.maxStaleSweepPages ?? 100;
  do {
    if (pages-- === 0) {
      // Each slice is read from its start every pass, so the rest of this one is never read: with
      // 4096 slices of 100 pages (1 MB each) that takes a table of about 400 GB.
      deps.log.error(
        "the stale-message sweep's slice is larger than its page budget: the rest of it is not swept; raise maxStaleSweepPages",
        slice,
      );
      return counts;
    }
    const page = await scanStaleJobs(deps.store, {
      ...slice,
      sentBefore: now - (options.staleMessageAfterMs ?? STALE_MESSAGE_AFTER_MS),
      leaseEndedBefore: now - MAX_VISIBILITY_SECONDS * 1000,
      limit: 1000,
      ...(startKey ? { startKey } : {}),
    });
    counts.scanned += page.scanned;
    // A job of a queue no longer declared has nowhere to go.
    await resend(
      deps,
      page.items.filter((item) => declared.has(item.queue)),
      now,
      counts,
    );
    startKey = page.next;
  } while (startKey);
  return counts;
}

/** The slice of the table the run at `now` sweeps: consecutive ticks walk every slice once per pass. */
export function staleSweepSlice(now: number, tickMs: number, passMs: number) {
  const totalSegments = Math.min(MAX_SEGMENTS, Math.max(1, Math.round(passMs / tickMs)));
  return { segment: Math.floor(now / tickMs) % totalSegments, totalSegments };
}

async function resend(deps: SweepDeps, items: SweptJob[], now: number, counts: SweepCounts) {
  if (items.length === 0) return;
  const writes = pLimit(16);
  const outgoing = await Promise.all(items.map((item) => writes(() => outgoingJob(deps, item))));
  const failed = await deps.transport.sendBatch(outgoing);
  await Promise.all(
    items
      .filter((item) => !failed.has(item.id))
      .map((item) =>
        writes(async () => {
          counts.resent += 1;
          deps.metrics.count("staleResent", item.queue, item.kind);
          deps.log.warn("re-sent the message of a job queued past the sweep's age", {
            ...jobFields(item),
            createdAt: item.createdAt,
          });
          await markResent(deps.store, item, now);
        }),
      ),
  );
}
