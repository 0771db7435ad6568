import { tierOf } from "../../lib/declarations/queue-declaration.ts";
import { buildAlarms } from "../../lib/deploy-plan/alarms.ts";
import { gaugeMetrics } from "../../lib/observability/metric-names.ts";
import type { RecordedResource } from "./pulumi-mocks.ts";
import { arnOf, type StageResources } from "./stage-resources.ts";

/**
 * The alarms and dashboard as SST registered them: exactly the alarms lib/deploy-plan/alarms.ts calls for,
 * on this stage's physical queues and workers, all notifying the same place (or nowhere); and a
 * dashboard body CloudWatch accepts, with a band per queue.
 */

interface Widget {
  type: string;
  x: number;
  y: number;
  width: number;
  height: number;
  properties: { markdown?: string; title?: string; metrics?: unknown[][]; region?: string };
}

const ALARM = "aws:cloudwatch/metricAlarm:MetricAlarm";

/** The worker function's physical name for a Lambda-tier queue, through its event source. */
function workerName(stage: StageResources, queue: string): string | undefined {
  const mapping = stage
    .ofType("aws:lambda/eventSourceMapping:EventSourceMapping")
    .find((m) => m.inputs.eventSourceArn === arnOf(stage.queue(queue)));
  return stage.functionByArn(mapping?.inputs.functionName)?.inputs.name as string | undefined;
}

/** Dimensions reach the provider with their keys sorted; compare them the same way. */
const sorted = (dimensions: unknown) =>
  Object.fromEntries(
    Object.entries((dimensions ?? {}) as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)),
  );

/** lib/deploy-plan/alarms.ts's specs with this stage's names, against the alarms SST registered. */
function alarmFailures(stage: StageResources): string[] {
  const failures: string[] = [];
  const spec = buildAlarms(
    stage.report.queues.map((q) => {
      const worker = tierOf(q) === "lambda" ? workerName(stage, q.name) : undefined;
      return {
        name: q.name,
        tier: tierOf(q),
        sqsName: String(stage.queue(q.name)?.inputs.name),
        dlqSqsName: String(stage.queue(q.name, true)?.inputs.name),
        ...(worker ? { workerFunctionName: worker } : {}),
      };
    }),
  );
  // The pool's scaling alarms are checked with the pool.
  const alarms = stage.ofType(ALARM).filter((a) => !a.name.startsWith(`${stage.prefix}Pool`));
  const named = (s: { id: string }) => `${stage.prefix}${s.id}`;
  for (const a of alarms) {
    if (!spec.some((s) => named(s) === a.name))
      failures.push(`alarm ${a.name} is not one lib/deploy-plan/alarms.ts plans`);
  }
  for (const s of spec) {
    const a = alarms.find((x) => x.name === named(s));
    if (!a) {
      failures.push(`alarm ${s.id} is missing`);
      continue;
    }
    const watched = {
      metric: a.inputs.metricName,
      dimensions: sorted(a.inputs.dimensions),
      threshold: a.inputs.threshold,
    };
    const planned = { metric: s.metricName, dimensions: sorted(s.dimensions), threshold: s.threshold };
    if (JSON.stringify(watched) !== JSON.stringify(planned)) {
      failures.push(`alarm ${s.id} watches ${JSON.stringify(watched)}`);
    }
  }
  return [...failures, ...notificationFailures(stage, alarms)];
}

/**
 * Alarms notify only when the deploy asked for it (SKYFORGE_ALARM_TOPIC_ARN or SKYFORGE_ALARM_EMAIL),
 * and then every alarm notifies the same topic on alarm and on recovery; a topic the stack creates
 * has the e-mail address subscribed.
 */
function notificationFailures(stage: StageResources, alarms: RecordedResource[]): string[] {
  const failures: string[] = [];
  const lists = new Set(alarms.map((a) => JSON.stringify(a.inputs.alarmActions ?? [])));
  for (const a of alarms) {
    if (JSON.stringify(a.inputs.okActions ?? []) !== JSON.stringify(a.inputs.alarmActions ?? [])) {
      failures.push(`alarm ${a.name} notifies differently on recovery`);
    }
  }
  if (lists.size > 1) failures.push(`alarms notify different targets: ${[...lists].join(" / ")}`);
  const actions = JSON.parse([...lists][0] ?? "[]") as string[];
  const topics = stage.ofType("aws:sns/topic:Topic");
  if (topics.length > 1) failures.push(`${topics.length} SNS topics; alarms need one at most`);
  const topic = topics[0];
  if (topic) {
    if (JSON.stringify(actions) !== JSON.stringify([arnOf(topic)])) {
      failures.push(`the stack's alarm topic is not what the alarms notify (${JSON.stringify(actions)})`);
    }
    const subscription = stage
      .ofType("aws:sns/topicSubscription:TopicSubscription")
      .find((s) => s.inputs.topic === arnOf(topic));
    if (subscription?.inputs.protocol !== "email" || !subscription.inputs.endpoint) {
      failures.push("the alarm topic has no e-mail subscription");
    }
  } else if (actions.length > 1 || actions.some((a) => !a.startsWith("arn:aws:sns:"))) {
    failures.push(`alarms notify ${JSON.stringify(actions)}, not one SNS topic`);
  }
  return failures;
}

function dashboardFailures(stage: StageResources): string[] {
  const dashboard = stage.ofType("aws:cloudwatch/dashboard:Dashboard")[0];
  if (!dashboard) return ["no dashboard"];
  const text = String(dashboard.inputs.dashboardBody);
  const body = JSON.parse(text) as { widgets?: Widget[] };
  if (!Array.isArray(body.widgets) || body.widgets.length === 0) return ["the dashboard has no widgets"];
  const failures: string[] = [];
  for (const [i, w] of body.widgets.entries()) {
    const where = `dashboard widget ${i} (${w.type})`;
    if (![w.x, w.y, w.width, w.height].every(Number.isInteger) || w.x < 0 || w.x + w.width > 24) {
      failures.push(`${where} lies outside the 24-column grid`);
    }
    if (w.type === "text" && typeof w.properties.markdown !== "string")
      failures.push(`${where} has no markdown`);
    if (w.type === "metric") {
      if (!w.properties.region) failures.push(`${where} has no region`);
      const rows = w.properties.metrics ?? [];
      if (rows.length === 0) failures.push(`${where} has no metrics`);
      for (const row of rows) {
        const parts = Array.isArray(row) ? row.filter((x) => typeof x !== "object" || x === null) : [row];
        if (!parts.every((x) => typeof x === "string" && x.length > 0)) {
          failures.push(`${where} has a metric row with an empty or non-string part: ${JSON.stringify(row)}`);
        }
      }
    }
  }
  const { queues } = stage.report;
  for (const q of queues) {
    if (!body.widgets.some((w) => w.properties.title?.startsWith(`${q.name} · `))) {
      failures.push(`the dashboard has no row for queue ${q.name}`);
    }
  }
  // The pool's children, by state, are gauges only the dashboard shows.
  if (queues.some((q) => tierOf(q) === "pool")) {
    for (const g of gaugeMetrics)
      if (!text.includes(`"${g}"`)) failures.push(`the dashboard lacks the ${g} gauge`);
  }
  return failures;
}

export function monitoringFailures(stage: StageResources): string[] {
  return [...alarmFailures(stage), ...dashboardFailures(stage)];
}
