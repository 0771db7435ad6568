import { Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";
import {
  type CountMetric,
  type GaugeMetric,
  METRICS_NAMESPACE,
  METRICS_SERVICE,
  type SizeMetric,
  type TimingMetric,
} from "./metric-names.ts";

/** Metrics are recorded per (queue, kind) and flushed once per invocation. */
export interface JobMetrics {
  count(name: CountMetric, queue: string, kind: string, n?: number): void;
  time(name: TimingMetric, queue: string, kind: string, ms: number): void;
  gauge(name: GaugeMetric, queue: string, kind: string, value: number): void;
  /** One sample of a size distribution (a batch call's items). */
  size(name: SizeMetric, queue: string, kind: string, value: number): void;
  flush(): void;
}

type Group = {
  counts: Map<CountMetric, number>;
  timings: Map<TimingMetric, number[]>;
  gauges: Map<GaugeMetric, number>;
  sizes: Map<SizeMetric, number[]>;
};
const emptyGroup = (): Group => ({
  counts: new Map(),
  timings: new Map(),
  gauges: new Map(),
  sizes: new Map(),
});

/** Aggregates in memory; subclasses decide where a flush goes. */
export class AggregatingMetrics implements JobMetrics {
  protected groups = new Map<string, Group>();

  private group(queue: string, kind: string): Group {
    const key = `${queue}\u0000${kind}`;
    let g = this.groups.get(key);
    if (!g) {
      g = emptyGroup();
      this.groups.set(key, g);
    }
    return g;
  }

  count(name: CountMetric, queue: string, kind: string, n = 1): void {
    const g = this.group(queue, kind);
    g.counts.set(name, (g.counts.get(name) ?? 0) + n);
  }

  time(name: TimingMetric, queue: string, kind: string, ms: number): void {
    const g = this.group(queue, kind);
    const list = g.timings.get(name) ?? [];
    list.push(ms);
    g.timings.set(name, list);
  }

  gauge(name: GaugeMetric, queue: string, kind: string, value: number): void {
    this.group(queue, kind).gauges.set(name, value);
  }

  size(name: SizeMetric, queue: string, kind: string, value: number): void {
    const g = this.group(queue, kind);
    g.sizes.set(name, [...(g.sizes.get(name) ?? []), value]);
  }

  /** Every sample of a size distribution across kinds, for one queue or all. */
  samples(name: SizeMetric, queue?: string): number[] {
    const out: number[] = [];
    for (const [key, g] of this.groups)
      if (queue === undefined || key.startsWith(`${queue}\u0000`)) out.push(...(g.sizes.get(name) ?? []));
    return out;
  }

  /** Total of a count across kinds, for one queue or all. */
  total(name: CountMetric, queue?: string): number {
    let sum = 0;
    for (const [key, g] of this.groups) {
      if (queue === undefined || key.startsWith(`${queue}\u0000`)) sum += g.counts.get(name) ?? 0;
    }
    return sum;
  }

  flush(): void {}
}

/** Keeps totals for the process lifetime: the local stack and tests read them. */
export class MemoryMetrics extends AggregatingMetrics {}

/**
 * CloudWatch EMF through Powertools: one blob per (queue, kind) and one per queue, per flush, so a
 * batch of a hundred jobs costs a handful of log lines and no PutMetricData calls.
 */
export class EmfMetrics extends AggregatingMetrics {
  private readonly serviceName: string;

  constructor(serviceName: string = METRICS_SERVICE) {
    super();
    this.serviceName = serviceName;
  }

  override flush(): void {
    const perQueue = new Map<string, Group>();
    for (const [key, g] of this.groups) {
      const [queue = "", kind = ""] = key.split("\u0000");
      this.publish({ queue, kind }, g);
      const q = perQueue.get(queue) ?? emptyGroup();
      for (const [n, v] of g.counts) q.counts.set(n, (q.counts.get(n) ?? 0) + v);
      for (const [n, v] of g.timings) q.timings.set(n, [...(q.timings.get(n) ?? []), ...v]);
      for (const [n, v] of g.gauges) q.gauges.set(n, (q.gauges.get(n) ?? 0) + v);
      for (const [n, v] of g.sizes) q.sizes.set(n, [...(q.sizes.get(n) ?? []), ...v]);
      perQueue.set(queue, q);
    }
    for (const [queue, g] of perQueue) this.publish({ queue }, g);
    this.groups.clear();
  }

  private publish(dimensions: Record<string, string>, g: Group): void {
    const m = new Metrics({ namespace: METRICS_NAMESPACE, serviceName: this.serviceName });
    m.addDimensions(dimensions);
    for (const [name, value] of g.counts) m.addMetric(name, MetricUnit.Count, value);
    for (const [name, values] of g.timings)
      for (const v of values) m.addMetric(name, MetricUnit.Milliseconds, v);
    for (const [name, value] of g.gauges) m.addMetric(name, MetricUnit.Count, value);
    for (const [name, values] of g.sizes) for (const v of values) m.addMetric(name, MetricUnit.Count, v);
    m.publishStoredMetrics();
  }
}
