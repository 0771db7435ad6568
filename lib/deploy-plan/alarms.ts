import { ConfigError } from "../errors.ts";
import { QUEUE_MESSAGE_RETENTION_SECONDS } from "../limits.ts";
import { METRICS_NAMESPACE, METRICS_SERVICE } from "../observability/metric-names.ts";
import type { QueueResources } from "./queue-resources.ts";
import { pascalCase } from "./resource-names.ts";

export interface AlarmThresholds {
  /** ApproximateAgeOfOldestMessage of a main queue, in seconds. */
  oldestMessageAgeSeconds: number;
  /** ApproximateAgeOfOldestMessage of a main queue nearing QUEUE_MESSAGE_RETENTION_SECONDS, in seconds. */
  nearRetentionAgeSeconds: number;
  /** Jobs that went dead within five minutes; the alarm fires above this. */
  deadJobsPerFiveMinutes: number;
}

export const defaultAlarmThresholds: AlarmThresholds = {
  // The oldest message of a healthy queue can be about 30 minutes old: a message counts from its
  // send, the reaper sends scheduled jobs up to 900 s ahead (DelaySeconds), and a job's message stays
  // in flight while it runs, up to the 900 s worker timeout. (Retries leave the metric after their
  // third receive, so backoff does not inflate it.) 45 minutes adds 15 minutes of real backlog.
  oldestMessageAgeSeconds: 2700,
  // Ten of the fourteen days: four days for a person to resume the queue or add workers before SQS
  // drops a message. SQS leaves a message out of this metric after its third receive, so a long retry
  // chain never shows here; the reaper's stale-message sweep covers it (docs/architecture.md §7).
  nearRetentionAgeSeconds: 10 * 86_400,
  // A dead job is terminal and only a person brings it back (POST /jobs/{id}/retry), so each one is
  // worth a look; raise this where some jobs are expected to die.
  deadJobsPerFiveMinutes: 0,
};

export type AlarmStatistic = "Sum" | "Maximum" | "Average" | "Minimum" | "SampleCount";

/** One CloudWatch metric alarm, in aws.cloudwatch.MetricAlarm's terms; infra adds names and actions. */
export interface AlarmSpec<S = string> {
  /** Unique PascalCase resource name, from the queue name: "my-queue" → "MyQueueDlqNotEmpty". */
  id: string;
  description: string;
  namespace: string;
  metricName: string;
  /** Physical names (S) for AWS metrics; the EMF dimensions are plain strings. */
  dimensions: Record<string, S | string>;
  statistic: AlarmStatistic;
  period: number;
  evaluationPeriods: number;
  threshold: number;
  comparisonOperator: "GreaterThanThreshold" | "GreaterThanOrEqualToThreshold" | "LessThanThreshold";
  treatMissingData: "notBreaching" | "breaching" | "missing" | "ignore";
}

// Five minutes: long enough to catch a DLQ message before the reaper drains it (it runs every
// minute), short enough that the page comes while the cause is fresh.
const PERIOD = 300;

export function buildAlarms<S>(
  queues: readonly QueueResources<S>[],
  thresholds: Partial<AlarmThresholds> = {},
): AlarmSpec<S>[] {
  const t = { ...defaultAlarmThresholds, ...thresholds };
  const alarms = queues.flatMap((q) => queueAlarms(q, t));
  const seen = new Set<string>();
  for (const a of alarms) {
    // Two queue names can fold to one id ("a-b" and "a_b"); two resources with one name fail the deploy.
    if (seen.has(a.id))
      throw new ConfigError(`alarms: two alarms are named ${a.id}; rename one of the queues`);
    seen.add(a.id);
  }
  return alarms;
}

function queueAlarms<S>(q: QueueResources<S>, t: AlarmThresholds): AlarmSpec<S>[] {
  const id = pascalCase(q.name);
  // An idle queue publishes nothing: SQS stops reporting an empty, untouched queue after six hours,
  // and EMF has no data point when no job ran. Silence is health here, not a broken sensor.
  const common = {
    period: PERIOD,
    evaluationPeriods: 1,
    comparisonOperator: "GreaterThanThreshold",
    treatMissingData: "notBreaching",
  } as const;

  const alarms: AlarmSpec<S>[] = [
    {
      ...common,
      id: `${id}DlqNotEmpty`,
      description:
        `Queue ${q.name}: a message reached the dead-letter queue after exhausting its receives. ` +
        "The reaper turns each into a dead job within a minute; if this stays on, the reaper is not draining.",
      namespace: "AWS/SQS",
      metricName: "ApproximateNumberOfMessagesVisible",
      dimensions: { QueueName: q.dlqSqsName },
      statistic: "Maximum",
      threshold: 0,
    },
    {
      ...common,
      id: `${id}OldestMessageAge`,
      description:
        `Queue ${q.name}: the oldest message is over ${t.oldestMessageAgeSeconds} s old; ` +
        "jobs are waiting longer than scheduling and running explain (workers stopped, paused or too few).",
      namespace: "AWS/SQS",
      metricName: "ApproximateAgeOfOldestMessage",
      dimensions: { QueueName: q.sqsName },
      statistic: "Maximum",
      threshold: t.oldestMessageAgeSeconds,
    },
    {
      ...common,
      id: `${id}NearRetention`,
      description:
        `Queue ${q.name}: the oldest message is over ${t.nearRetentionAgeSeconds / 86_400} days old, and SQS ` +
        `drops messages at ${QUEUE_MESSAGE_RETENTION_SECONDS / 86_400} days. Resume the queue or add workers; ` +
        "the reaper re-sends the message of any job queued that long, but only a drained queue is safe.",
      namespace: "AWS/SQS",
      metricName: "ApproximateAgeOfOldestMessage",
      dimensions: { QueueName: q.sqsName },
      statistic: "Maximum",
      threshold: t.nearRetentionAgeSeconds,
    },
    {
      ...common,
      id: `${id}DeadJobs`,
      description: `Queue ${q.name}: more than ${t.deadJobsPerFiveMinutes} jobs went dead in five minutes.`,
      namespace: METRICS_NAMESPACE,
      metricName: "dead",
      // The per-queue set EmfMetrics publishes; the per-kind set would need one alarm per kind.
      dimensions: { service: METRICS_SERVICE, queue: q.name },
      statistic: "Sum",
      threshold: t.deadJobsPerFiveMinutes,
    },
    {
      ...common,
      id: `${id}PausedJobs`,
      // Any paused job waits for a person: resume it (POST /jobs/{id}/resume) or end it (§21).
      description: `Queue ${q.name}: a job used its last attempt and is paused; resume or cancel it (GET /jobs?status=paused).`,
      namespace: METRICS_NAMESPACE,
      metricName: "paused",
      dimensions: { service: METRICS_SERVICE, queue: q.name },
      statistic: "Sum",
      threshold: 0,
    },
    {
      ...common,
      id: `${id}CronFailed`,
      // A fire that fails fails again next time (a kind removed, a payload the kind now refuses):
      // the schedule's lastError in GET /schedules says why (docs/architecture.md §7).
      description: `Queue ${q.name}: a schedule's fire could not be enqueued; see lastError in GET /schedules.`,
      namespace: METRICS_NAMESPACE,
      metricName: "cronFailed",
      dimensions: { service: METRICS_SERVICE, queue: q.name },
      statistic: "Sum",
      threshold: 0,
    },
  ];
  if (q.tier === "lambda" && q.workerFunctionName !== undefined)
    alarms.push({
      ...common,
      id: `${id}WorkerErrors`,
      // A job's failure is a batch item failure, not a function error: Errors means the worker itself
      // crashed, timed out or ran out of memory, and its whole batch goes back to the queue.
      description: `Queue ${q.name}: the worker function failed (crash, timeout or out of memory).`,
      namespace: "AWS/Lambda",
      metricName: "Errors",
      dimensions: { FunctionName: q.workerFunctionName },
      statistic: "Sum",
      threshold: 0,
    });
  return alarms;
}
