import type { Clock } from "../clock.ts";
import { jobFields, type Log } from "../observability/log.ts";
import type { JobMetrics } from "../observability/metrics.ts";
import type { ChildGroup } from "./child-group.ts";
import type { ChildEvent } from "./child-slot.ts";

/** The pool's metrics and logs: what happened on children, and how many are busy and idle. */
export class PoolObserver {
  private readonly reportedRespawns = new Map<string, number>();

  constructor(
    private readonly deps: { metrics: JobMetrics; log: Log; clock: Clock },
    private readonly queueOf: (kind: string) => string,
  ) {}

  event(
    event: ChildEvent,
    job: { id: string; kind: string; queue: string },
    receivedAt: number,
    detail?: string,
  ) {
    const { metrics, log, clock } = this.deps;
    switch (event) {
      case "dispatched":
        metrics.count("poolDispatched", job.queue, job.kind);
        metrics.time("dispatchLatency", job.queue, job.kind, clock.now() - receivedAt);
        return;
      case "desync":
        metrics.count("childDesyncs", job.queue, job.kind);
        log.warn("child out of sync; killed it, the attempt fails", { ...jobFields(job), detail });
        return;
      case "timeout":
        metrics.count("childTimeouts", job.queue, job.kind);
        log.warn("child timed out; killed it", jobFields(job));
        return;
      case "rip":
        log.warn("child died mid-job; running the job again on a fresh child first", {
          ...jobFields(job),
          detail,
        });
        return;
    }
  }

  /** Busy and idle children as gauges, and the respawns since the last report as a count. */
  children(group: ChildGroup): void {
    const queue = this.queueOf(group.kind);
    const { busy, idle } = group.stats();
    this.deps.metrics.gauge("childrenBusy", queue, group.kind, busy);
    this.deps.metrics.gauge("childrenIdle", queue, group.kind, idle);
    const delta = group.respawns - (this.reportedRespawns.get(group.kind) ?? 0);
    if (delta > 0) this.deps.metrics.count("childRespawns", queue, group.kind, delta);
    this.reportedRespawns.set(group.kind, group.respawns);
  }
}
