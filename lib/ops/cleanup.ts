import type { QueueDeclaration } from "../declarations/queue-declaration.ts";
import { effectiveSettings } from "../queue-control/settings.ts";
import type { Engine } from "../services/engine-services.ts";
import { deleteExpired, purgeJob, scanPage } from "../store/cleanup-ops.ts";
import { attributeBefore, attributeEquals, attributeNotEquals, statusIs } from "../store/conditions.ts";
import { and, type Condition, or } from "../store/expression.ts";
import type { JobItem } from "../store/job-item.ts";
import { getQueueState } from "../store/queue-state.ts";
import { queryIndexBefore } from "../store/reaper-ops.ts";

const DAY_MS = 86_400_000;

export interface CleanupOptions {
  /**
   * Items the sweep may scan per run (0 = no sweep). On AWS, DynamoDB's TTL removes done and
   * cancelled jobs and expired helper items, so the sweep is off; emulators have no TTL, so the
   * local stack sweeps.
   */
  sweepItemsPerRun?: number;
  maxDeadPurgesPerQueue?: number;
}

export interface CleanupReport {
  purgedDead: number;
  purgedDone: number;
  purgedCancelled: number;
  /** Expired payload items, unique-key locks and other items with a passed TTL (sweep only). */
  purgedExpired: number;
  /** Items the sweep read this run. */
  swept: number;
}

export type CleanupDeps = Pick<Engine, "store" | "queues" | "clock" | "metrics" | "log">;

/**
 * Retention cleanup (docs/architecture.md §7). Dead jobs are indexed, so they are purged by an index
 * query against the queue's current dead retention. Done and cancelled jobs are not indexed (that
 * would cost a write per job): TTL, set at finish from the retention then in force, removes them on
 * AWS; the sweep (a resumable, bounded scan) does the same for emulators and applies the current
 * retention. Each delete is conditional on the job being unchanged, so two cleanups never purge a
 * job that was redriven in between.
 */
export class Cleanup {
  /** Where the sweep resumes: a bounded slice of the table per run, the whole table over many. */
  private sweepFrom: Record<string, unknown> | undefined;

  private readonly deps: CleanupDeps;
  private readonly options: CleanupOptions;

  constructor(deps: CleanupDeps, options: CleanupOptions = {}) {
    this.deps = deps;
    this.options = options;
  }

  async run(): Promise<CleanupReport> {
    const report: CleanupReport = {
      purgedDead: 0,
      purgedDone: 0,
      purgedCancelled: 0,
      purgedExpired: 0,
      swept: 0,
    };
    const settings = new Map<string, ReturnType<typeof effectiveSettings>>();
    for (const q of this.deps.queues) {
      const s = effectiveSettings(q, await getQueueState(this.deps.store, q.name));
      settings.set(q.name, s);
      await this.purgeDead(q, s.retentionDays.dead, report);
    }
    if ((this.options.sweepItemsPerRun ?? 0) > 0) await this.sweep(settings, report);
    this.deps.metrics.flush();
    return report;
  }

  private async purgeDead(q: QueueDeclaration, days: number, report: CleanupReport): Promise<void> {
    const cutoff = this.deps.clock.now() - days * DAY_MS;
    let budget = this.options.maxDeadPurgesPerQueue ?? 1000;
    for (let shard = 0; shard < this.deps.store.layout.indexShards && budget > 0; shard++) {
      let startKey: Record<string, unknown> | undefined;
      do {
        const page = await queryIndexBefore(
          this.deps.store,
          { queue: q.name, status: "dead", shard },
          cutoff,
          Math.min(100, budget),
          startKey,
        );
        budget -= page.items.length;
        for (const item of page.items) if (await this.purge(item)) report.purgedDead += 1;
        startKey = page.next;
      } while (startKey && budget > 0);
    }
  }

  private async sweep(
    settings: ReadonlyMap<string, ReturnType<typeof effectiveSettings>>,
    report: CleanupReport,
  ): Promise<void> {
    const now = this.deps.clock.now();
    const finishedBefore = (status: "done" | "cancelled", days: number) =>
      and(statusIs(status), attributeBefore("finishedAt", now - days * DAY_MS));
    const perQueue: Condition[] = [...settings].map(([queue, s]) =>
      and(
        attributeEquals("sk", "job"),
        attributeEquals("queue", queue),
        // Cancelled jobs keep the dead retention, as the cancel route sets it.
        or(finishedBefore("done", s.retentionDays.done), finishedBefore("cancelled", s.retentionDays.dead)),
      ),
    );
    const expired = and(
      attributeNotEquals("sk", "job"),
      attributeBefore("expiresAt", Math.floor(now / 1000)),
    );
    const filter = or(...perQueue, expired);
    const budget = this.options.sweepItemsPerRun ?? 0;
    while (report.swept < budget) {
      const page = await scanPage(
        this.deps.store,
        filter,
        Math.min(200, budget - report.swept),
        this.sweepFrom,
      );
      // An empty page still moves the budget on, so a sparse table can't loop here forever.
      report.swept += Math.max(1, page.scanned);
      for (const raw of page.items) {
        if (raw.sk === "job") {
          const item = raw as unknown as JobItem;
          if (!(await this.purge(item))) continue;
          if (item.status === "done") report.purgedDone += 1;
          else report.purgedCancelled += 1;
        } else if (
          await deleteExpired(
            this.deps.store,
            { pk: raw.pk as string, sk: raw.sk as string },
            raw.expiresAt as number,
          )
        ) {
          report.purgedExpired += 1;
        }
      }
      this.sweepFrom = page.next;
      if (!page.next) return;
    }
  }

  private async purge(item: JobItem): Promise<boolean> {
    const purged = await purgeJob(this.deps.store, item);
    if (purged) this.deps.metrics.count("purged", item.queue, item.kind);
    return purged;
  }
}
