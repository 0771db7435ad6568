import { ConfigError } from "../errors.ts";
import {
  type CountMetric,
  countMetrics,
  type GaugeMetric,
  METRICS_NAMESPACE,
  METRICS_SERVICE,
  type SizeMetric,
  type TimingMetric,
} from "../observability/metric-names.ts";
import {
  type DashboardBody,
  type Draft,
  type Extra,
  fullWidth,
  GRID_WIDTH,
  type MetricOptions,
  type MetricRow,
  metricWidget,
  PERIOD,
  place,
  row,
  type Stat,
  text,
} from "./dashboard-grid.ts";
import type { PoolResources, QueueResources } from "./queue-resources.ts";

/**
 * The CloudWatch dashboard body (CloudWatch-Dashboard-Body-Structure): a header, then one band of
 * widgets per queue, every widget titled "<queue> · …". Infra passes the result to $jsonStringify.
 * What each band shows is here; the widget shapes and their placement on the grid are dashboard-grid.ts's.
 */

export interface DashboardInput<S> {
  region: S;
  queues: readonly QueueResources<S>[];
  pool?: PoolResources<S>;
}

const MAX_WIDGETS = 500;

export function buildDashboardBody<S>(input: DashboardInput<S>): DashboardBody<S> {
  const lines: Draft<S>[][] = [[{ width: GRID_WIDTH, height: 2, widget: text(HEADER) }]];
  for (const q of input.queues) lines.push(...queueBand(q, input.region, input.pool));
  const widgets = place(lines);
  // CloudWatch refuses a body over 500 widgets; failing here names the cause before a deploy does.
  if (widgets.length > MAX_WIDGETS)
    throw new ConfigError(`dashboard: ${widgets.length} widgets, CloudWatch allows ${MAX_WIDGETS}`);
  return { periodOverride: "inherit", widgets };
}

const HEADER = [
  "# skyforge",
  "One band per queue. Job counts are per minute (Sum); latencies and durations in milliseconds.",
  "Dead-letter messages are drained into dead jobs by the reaper every minute, so DLQ depth should stay at 0.",
].join("\n\n");

const JOB_FLOW = ["enqueued", "started", "succeeded", "retried", "dead"] as const;
const POOL_COUNTS = ["childRespawns", "childDesyncs", "childTimeouts"] as const;
// Every other counter goes to "other outcomes", so one added to countMetrics is on the dashboard at once.
const BATCH_COUNTS = ["batchCalls", "batchKeyBusy"] as const;
// `throttled` is also a queue's own throttle, so it stays in "other outcomes" as well.
const FLOW_KEY_COUNTS = ["keyParked", "keyWaits", "throttled"] as const;
const SHOWN_ELSEWHERE = new Set<CountMetric>([
  ...JOB_FLOW,
  ...POOL_COUNTS,
  ...BATCH_COUNTS,
  "keyParked",
  "keyWaits",
  "deadLettered",
  "poolDispatched",
]);
const OTHER_COUNTS = countMetrics.filter((m) => !SHOWN_ELSEWHERE.has(m));

function queueBand<S>(q: QueueResources<S>, region: S, pool?: PoolResources<S>): Draft<S>[][] {
  const emf = (
    name: CountMetric | TimingMetric | GaugeMetric | SizeMetric,
    options: MetricOptions,
    kind?: string,
  ) => skyforge(name, q.name, options, kind);
  const chart = (title: string, metrics: MetricRow<S>[], stat: Stat, extra: Extra<S> = {}) =>
    metricWidget(region, `${q.name} · ${title}`, metrics, stat, extra);
  const sqs = (metricName: string, name: S, options: MetricOptions) =>
    row("AWS/SQS", metricName, ["QueueName", name], options);
  const percentiles = (name: TimingMetric, stats: readonly Stat[], suffix = "") =>
    stats.map((stat) => emf(name, { stat, label: `${stat}${suffix}` }));

  const kinds = pool?.kinds.filter((k) => k.queue === q.name).map((k) => k.name) ?? [];
  const heading =
    q.tier === "pool"
      ? `### Queue \`${q.name}\` · Fargate pool${kinds.length ? ` · kinds: ${kinds.join(", ")}` : ""}`
      : `### Queue \`${q.name}\` · Lambda worker`;

  const overview: Draft<S>[] = [
    chart(
      "jobs / min",
      JOB_FLOW.map((m) => emf(m, { label: m })),
      "Sum",
    ),
    chart(
      "queue latency (ms)",
      [
        ...percentiles("queueLatency", ["p50", "p99"]),
        // A group's last child recorded → its completion job's start (docs/architecture.md §15).
        ...percentiles("groupCompletionLag", ["p50", "p99"], " group completion lag"),
      ],
      "p99",
    ),
    chart(
      "SQS backlog",
      [
        sqs("ApproximateNumberOfMessagesVisible", q.sqsName, { label: "visible" }),
        sqs("ApproximateNumberOfMessagesNotVisible", q.sqsName, { label: "in flight" }),
        sqs("ApproximateNumberOfMessagesDelayed", q.sqsName, { label: "delayed" }),
        sqs("ApproximateAgeOfOldestMessage", q.sqsName, { label: "oldest message age (s)", yAxis: "right" }),
      ],
      "Maximum",
      { yAxis: { left: { min: 0, label: "messages" }, right: { min: 0, label: "seconds" } } },
    ),
    chart(
      "DLQ",
      [
        sqs("ApproximateNumberOfMessagesVisible", q.dlqSqsName, { label: "DLQ depth" }),
        emf("deadLettered", { stat: "Sum", label: "drained by the reaper / min", yAxis: "right" }),
      ],
      "Maximum",
    ),
  ];
  const runDuration = chart(
    "run duration (ms)",
    percentiles("runDuration", ["p50", "p99", "Maximum"]),
    "p99",
  );
  const otherCounts = chart(
    "other outcomes / min",
    OTHER_COUNTS.map((m) => emf(m, { label: m })),
    "Sum",
  );

  // Batch kinds (docs/architecture.md §18): calls, calls put off for a busy key, items per call, wait.
  const batches: Draft<S>[] = [
    chart(
      "batch calls / min",
      BATCH_COUNTS.map((m) => emf(m, { label: m })),
      "Sum",
    ),
    chart(
      "batch size (items) & wait (ms)",
      [
        emf("batchItems", { stat: "p50", label: "items p50" }),
        emf("batchItems", { stat: "Maximum", label: "items max" }),
        ...(["p50", "p99"] as const).map((stat) =>
          emf("batchWait", { stat, label: `wait ${stat}`, yAxis: "right" }),
        ),
      ],
      "p50",
    ),
  ];

  // Flow keys (docs/architecture.md §20): jobs parked for a full key, waits for a key's cool-down or
  // rate, throttles; beside them how long jobs wait to start (a parked job's wait is in it).
  const flowKeys: Draft<S>[] = [
    chart(
      "flow keys / min",
      FLOW_KEY_COUNTS.map((m) => emf(m, { label: m })),
      "Sum",
    ),
    chart("queue latency p99 (ms, parked waits included)", percentiles("queueLatency", ["p99"]), "p99"),
  ];

  if (q.tier === "lambda") {
    const fn = q.workerFunctionName;
    const worker = fn === undefined ? [] : lambdaWorker(region, q.name, fn);
    return [[fullWidth(heading)], overview, [...worker, runDuration, otherCounts], batches, flowKeys];
  }

  const busyByKind = kinds.map((kind) => emf("childrenBusy", { label: `busy · ${kind}` }, kind));
  const poolWidgets: Draft<S>[] = [
    ...(pool ? [poolTasks(region, q.name, pool)] : []),
    chart(
      "pool children",
      [emf("childrenBusy", { label: "busy" }), emf("childrenIdle", { label: "idle" }), ...busyByKind],
      "Maximum",
    ),
    chart(
      "pool dispatch",
      [
        ...percentiles("dispatchLatency", ["p50", "p99"], " latency (ms)"),
        emf("poolDispatched", { stat: "Sum", label: "dispatched / min", yAxis: "right" }),
      ],
      "p99",
    ),
    chart(
      "pool child failures / min",
      POOL_COUNTS.map((m) => emf(m, { label: m })),
      "Sum",
    ),
  ];
  const wide = (d: Draft<S>) => ({ ...d, width: GRID_WIDTH / 2 });
  return [
    [fullWidth(heading)],
    overview,
    poolWidgets,
    [wide(runDuration), wide(otherCounts)],
    batches,
    flowKeys,
  ];
}

/** Function errors only: a failed job is a batch item failure, so any Lambda error is a crash or timeout. */
function lambdaWorker<S>(region: S, queue: string, fn: S): Draft<S>[] {
  const lambda = (metricName: string, options: MetricOptions) =>
    row("AWS/Lambda", metricName, ["FunctionName", fn], options);
  const errors = [lambda("Errors", { label: "errors" }), lambda("Throttles", { label: "throttles" })];
  const duration = (["p50", "p99", "Maximum"] as const).map((stat) =>
    lambda("Duration", { stat, label: stat }),
  );
  return [
    metricWidget(region, `${queue} · worker errors & throttles`, errors, "Sum"),
    metricWidget(region, `${queue} · worker duration (ms)`, duration, "p99"),
  ];
}

/**
 * Running pool tasks as the SampleCount of the service's AWS/ECS CPUUtilization at a 1-minute
 * period: each RUNNING task contributes one sample a minute (ECS developer guide, "Service RUNNING
 * task count"). It is free and always there on Fargate. ECS/ContainerInsights RunningTaskCount would
 * be exact, but needs Container Insights on the cluster, which sst.aws.Cluster leaves off and which
 * bills per task and metric. The count is only right at 60 s, hence the body's periodOverride.
 */
function poolTasks<S>(region: S, queue: string, pool: PoolResources<S>): Draft<S> {
  const dims = ["ClusterName", pool.clusterName, "ServiceName", pool.serviceName];
  const ecs = (options: MetricOptions) => row("AWS/ECS", "CPUUtilization", dims, options);
  return metricWidget(
    region,
    `${queue} · pool tasks`,
    [
      ecs({ stat: "SampleCount", period: PERIOD, label: "tasks running" }),
      ecs({ stat: "Average", label: "CPU % (avg)", yAxis: "right" }),
    ],
    "SampleCount",
    { yAxis: { left: { min: 0, label: "tasks", showUnits: false }, right: { min: 0, label: "CPU %" } } },
  );
}

function skyforge(name: string, queue: string, options: MetricOptions, kind?: string): MetricRow<never> {
  // The dimension sets EmfMetrics publishes: {service, queue} and {service, queue, kind}.
  const kindDim = kind === undefined ? [] : ["kind", kind];
  return row(METRICS_NAMESPACE, name, ["service", METRICS_SERVICE, "queue", queue, ...kindDim], options);
}
