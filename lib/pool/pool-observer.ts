import type { Clock } from "../clock.ts";
import { jobFields, type Log } from "../observability/log.ts";
import type { JobMetrics } from "../observability/metrics.ts";
import type { KindChildren } from "./kind-children.ts";
import type { ChildEvent } from "./reserved-child.ts";

/** The pool's metrics and logs: what happened on children, and how many are busy and idle. */
export class PoolObserver {
  private readonly reportedRespawns = new Map<string, number>();

  private readonly deps: { metrics: JobMetrics; log: Log; clock: Clock };
  private readonly queueOf: (kind: string) => string;

  constructor(deps: { metrics: JobMetrics; log: Log; clock: Clock }, queueOf: (kind: string) => string) {
    this.deps = deps;
    this.queueOf = queueOf;
  }

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
  children(of: KindChildren): void {
    const queue = this.queueOf(of.kind);
    const { busy, idle } = of.stats();
    this.deps.metrics.gauge("childrenBusy", queue, of.kind, busy);
    this.deps.metrics.gauge("childrenIdle", queue, of.kind, idle);
    const delta = of.respawns - (this.reportedRespawns.get(of.kind) ?? 0);
    if (delta > 0) this.deps.metrics.count("childRespawns", queue, of.kind, delta);
    this.reportedRespawns.set(of.kind, of.respawns);
  }
}
