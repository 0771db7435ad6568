import { describe, expect, test } from "vitest";
import { buildDashboardBody } from "../../lib/deploy-plan/dashboard.ts";
import type {
  DashboardBody,
  MetricOptions,
  MetricRow,
  MetricWidget,
} from "../../lib/deploy-plan/dashboard-grid.ts";
import type { PoolResources, QueueResources } from "../../lib/deploy-plan/queue-resources.ts";
import {
  countMetrics,
  gaugeMetrics,
  METRICS_NAMESPACE,
  METRICS_SERVICE,
  sizeMetrics,
  timingMetrics,
} from "../../lib/observability/metric-names.ts";
import { queueResources } from "../support/queue-resources.ts";

const queues = queueResources("default", "emails");
const pool: PoolResources = {
  clusterName: "app-dev-Cluster",
  serviceName: "app-dev-Pool",
  kinds: [
    { name: "py-digest", queue: "heavy" },
    { name: "node-digest", queue: "heavy" },
  ],
};
const body = buildDashboardBody({ region: "eu-west-1", queues, pool });

const metricWidgets = <S>(b: DashboardBody<S>) =>
  b.widgets.filter((w): w is MetricWidget<S> => w.type === "metric");
const titled = (name: string) =>
  metricWidgets(body).filter((w) => w.properties.title.startsWith(`${name} · `));
const isOptions = (v: unknown) => typeof v === "object" && v !== null && !Array.isArray(v);

/** A metric array as namespace, metric name, dimensions (in order) and the trailing options, if any. */
function parse(row: MetricRow<string>) {
  const last = row[row.length - 1];
  const options = isOptions(last) ? (last as MetricOptions) : undefined;
  const pairs = row.slice(2, options ? -1 : undefined);
  const dims: [unknown, unknown][] = [];
  for (let i = 0; i < pairs.length; i += 2) dims.push([pairs[i], pairs[i + 1]]);
  return { namespace: row[0], metricName: row[1], dims, pairCount: pairs.length, options };
}

describe("dashboard body", () => {
  test("survives JSON.stringify / JSON.parse unchanged", () => {
    expect(JSON.parse(JSON.stringify(body))).toEqual(body);
  });

  test("every widget has a valid type and an integer box inside the 24-column grid", () => {
    expect(body.widgets.length).toBeGreaterThan(0);
    for (const w of body.widgets) {
      expect(["metric", "text"]).toContain(w.type);
      for (const n of [w.x, w.y, w.width, w.height]) expect(Number.isInteger(n)).toBe(true);
      expect(w.x).toBeGreaterThanOrEqual(0);
      expect(w.y).toBeGreaterThanOrEqual(0);
      expect(w.width).toBeGreaterThanOrEqual(1);
      expect(w.height).toBeGreaterThanOrEqual(1);
      expect(w.x + w.width).toBeLessThanOrEqual(24);
    }
  });

  test("no two widgets overlap", () => {
    const ws = body.widgets;
    for (let i = 0; i < ws.length; i++)
      for (let j = i + 1; j < ws.length; j++) {
        const a = ws[i];
        const b = ws[j];
        if (!a || !b) continue;
        const apart =
          a.x + a.width <= b.x || b.x + b.width <= a.x || a.y + a.height <= b.y || b.y + b.height <= a.y;
        expect(apart, `widgets ${i} and ${j} overlap`).toBe(true);
      }
  });

  test("metric widgets name their region, and each metric array is namespace, name, pairs, options?", () => {
    const widgets = metricWidgets(body);
    expect(widgets.length).toBeGreaterThan(0);
    for (const w of widgets) {
      expect(w.properties.region).toBe("eu-west-1");
      expect(["timeSeries", "singleValue"]).toContain(w.properties.view);
      expect(typeof w.properties.title).toBe("string");
      expect(w.properties.metrics.length).toBeGreaterThan(0);
      for (const row of w.properties.metrics) {
        const m = parse(row);
        expect(typeof m.namespace).toBe("string");
        expect(typeof m.metricName).toBe("string");
        expect(m.pairCount % 2, JSON.stringify(row)).toBe(0);
        for (const [name, value] of m.dims) {
          expect(name).toMatch(/^[A-Za-z][A-Za-z]*$/);
          expect(typeof value).toBe("string");
        }
        if (m.options)
          expect(Object.keys(m.options).every((k) => ["stat", "label", "yAxis", "period"].includes(k))).toBe(
            true,
          );
      }
    }
  });

  test("one band of widgets per queue, in declaration order, with no band interleaving another", () => {
    const bands = queues.map((q) => {
      const ws = titled(q.name);
      expect(ws.length, q.name).toBeGreaterThan(0);
      return { top: Math.min(...ws.map((w) => w.y)), bottom: Math.max(...ws.map((w) => w.y + w.height)) };
    });
    for (let i = 1; i < bands.length; i++)
      expect(bands[i]?.top).toBeGreaterThanOrEqual(bands[i - 1]?.bottom ?? 0);
    // Every metric widget belongs to some queue's band.
    const owned = queues.flatMap((q) => titled(q.name));
    expect(owned.length).toBe(metricWidgets(body).length);
  });

  test("Lambda queues get worker widgets and no pool widgets; the pool queue the reverse; both the batch row", () => {
    const namespaces = (name: string) =>
      new Set(titled(name).flatMap((w) => w.properties.metrics.map((r) => r[0] as string)));
    const metricNames = (name: string) =>
      new Set(titled(name).flatMap((w) => w.properties.metrics.map((r) => r[1] as string)));
    const poolOnly = ["childrenBusy", "childrenIdle", "dispatchLatency", "poolDispatched", "childRespawns"];
    for (const q of ["default", "emails"]) {
      expect(namespaces(q)).toContain("AWS/Lambda");
      expect(namespaces(q)).not.toContain("AWS/ECS");
      for (const m of poolOnly) expect(metricNames(q)).not.toContain(m);
      expect(titled(q).some((w) => w.properties.title.includes("pool"))).toBe(false);
    }
    expect(namespaces("heavy")).toContain("AWS/ECS");
    expect(namespaces("heavy")).not.toContain("AWS/Lambda");
    for (const m of poolOnly) expect(metricNames("heavy")).toContain(m);
    // Batch kinds run on both tiers: every band has the batch row.
    for (const q of ["default", "emails", "heavy"])
      for (const m of ["batchCalls", "batchKeyBusy", "batchItems", "batchWait"])
        expect(metricNames(q)).toContain(m);
  });

  test("every band has a flow keys row: parked, waits and throttles per minute, and queue latency p99 beside it", () => {
    for (const q of ["default", "emails", "heavy"]) {
      const keys = titled(q).find((w) => w.properties.title === `${q} · flow keys / min`);
      expect(keys, q).toBeDefined();
      if (!keys) continue;
      expect(keys.properties.stat).toBe("Sum");
      expect(keys.properties.metrics.map((r) => parse(r).metricName)).toEqual([
        "keyParked",
        "keyWaits",
        "throttled",
      ]);
      const beside = titled(q).filter((w) => w.y === keys.y && w !== keys);
      expect(beside.map((w) => w.properties.title)).toEqual([
        `${q} · queue latency p99 (ms, parked waits included)`,
      ]);
      const latency = beside[0]?.properties.metrics.map(parse) ?? [];
      expect(latency.map((m) => [m.metricName, m.options?.stat])).toEqual([["queueLatency", "p99"]]);
      // The row is the band's last: nothing of this queue below it.
      expect(Math.max(...titled(q).map((w) => w.y))).toBe(keys.y);
      // keyParked and keyWaits moved out of "other outcomes"; throttled (a queue's throttle too) stays.
      const other = titled(q).find((w) => w.properties.title === `${q} · other outcomes / min`);
      const otherNames = other?.properties.metrics.map((r) => parse(r).metricName) ?? [];
      expect(otherNames).not.toContain("keyParked");
      expect(otherNames).not.toContain("keyWaits");
      expect(otherNames).toContain("throttled");
    }
  });

  test("every EMF metric appears with service and queue dimensions naming its queue", () => {
    const all = [...countMetrics, ...timingMetrics, ...gaugeMetrics, ...sizeMetrics];
    const seen = new Set<string>();
    for (const q of queues)
      for (const w of titled(q.name))
        for (const row of w.properties.metrics) {
          const m = parse(row);
          if (m.namespace !== METRICS_NAMESPACE) continue;
          const dims = Object.fromEntries(m.dims);
          expect(dims.service).toBe(METRICS_SERVICE);
          expect(dims.queue).toBe(q.name);
          if (m.dims.length === 2) seen.add(m.metricName as string);
        }
    for (const name of all) expect(seen, name).toContain(name);
  });

  test("SQS, DLQ, Lambda and ECS metrics use the real dimension names and the given physical names", () => {
    const rows = metricWidgets(body).flatMap((w) => w.properties.metrics.map(parse));
    const dimsOf = (ns: string, metric: string) =>
      rows
        .filter((r) => r.namespace === ns && r.metricName === metric)
        .map((r) => Object.fromEntries(r.dims));
    for (const q of queues) {
      for (const m of [
        "ApproximateNumberOfMessagesVisible",
        "ApproximateNumberOfMessagesNotVisible",
        "ApproximateNumberOfMessagesDelayed",
        "ApproximateAgeOfOldestMessage",
      ])
        expect(dimsOf("AWS/SQS", m)).toContainEqual({ QueueName: q.sqsName });
      expect(dimsOf("AWS/SQS", "ApproximateNumberOfMessagesVisible")).toContainEqual({
        QueueName: q.dlqSqsName,
      });
      if (q.workerFunctionName)
        for (const m of ["Errors", "Throttles", "Duration"])
          expect(dimsOf("AWS/Lambda", m)).toContainEqual({ FunctionName: q.workerFunctionName });
    }
    const tasks = rows.filter((r) => r.namespace === "AWS/ECS" && r.options?.stat === "SampleCount");
    expect(tasks.length).toBe(1);
    expect(tasks[0]?.metricName).toBe("CPUUtilization");
    expect(Object.fromEntries(tasks[0]?.dims ?? [])).toEqual({
      ClusterName: pool.clusterName,
      ServiceName: pool.serviceName,
    });
    // SampleCount is a task count only at a one-minute period, which the body keeps from being overridden.
    expect(tasks[0]?.options?.period).toBe(60);
    expect(body.periodOverride).toBe("inherit");
  });

  test("physical names of any type are placed untouched, never stringified", () => {
    type Out = { out: string };
    const o = (out: string): Out => ({ out });
    const region = o("region");
    const input: { region: Out; queues: QueueResources<Out>[]; pool: PoolResources<Out> } = {
      region,
      queues: [
        {
          name: "default",
          tier: "lambda",
          sqsName: o("q"),
          dlqSqsName: o("dlq"),
          workerFunctionName: o("fn"),
        },
        { name: "heavy", tier: "pool", sqsName: o("hq"), dlqSqsName: o("hdlq") },
      ],
      pool: {
        clusterName: o("cluster"),
        serviceName: o("service"),
        kinds: [{ name: "py-digest", queue: "heavy" }],
      },
    };
    const b = buildDashboardBody<Out>(input);

    const found = new Set<unknown>();
    const walk = (v: unknown): void => {
      if (Array.isArray(v)) v.forEach(walk);
      else if (isOptions(v)) {
        found.add(v);
        for (const x of Object.values(v as object)) walk(x);
      }
    };
    walk(b);
    const names = [
      region,
      input.pool.clusterName,
      input.pool.serviceName,
      ...input.queues.flatMap((q) => [
        q.sqsName,
        q.dlqSqsName,
        ...(q.workerFunctionName ? [q.workerFunctionName] : []),
      ]),
    ];
    for (const n of names) expect(found.has(n), n.out).toBe(true);
    for (const n of names) expect(n).toEqual({ out: n.out });
    expect(JSON.stringify(b)).not.toContain("[object Object]");
    for (const w of metricWidgets(b)) expect(w.properties.region).toBe(region);
  });
});
