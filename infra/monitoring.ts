import { tierOf } from "../lib/declarations/queue-declaration";
import { buildAlarms } from "../lib/deploy-plan/alarms";
import { buildDashboardBody } from "../lib/deploy-plan/dashboard";
import type { QueueResources } from "../lib/deploy-plan/queue-resources";
import { cluster, pool } from "./pool";
import { poolKinds } from "./pool-config";
import { queues } from "./queues";
import { workers } from "./workers";

/**
 * The dashboard and alarms, both built by pure functions in lib/deploy-plan from the same declarations.
 * Notifications are optional, chosen at deploy time: SKYFORGE_ALARM_TOPIC_ARN names an existing SNS
 * topic; otherwise SKYFORGE_ALARM_EMAIL creates a topic with that e-mail subscribed (AWS mails a
 * confirmation link first). With neither, alarms only change state on the dashboard.
 */
type Name = $util.Output<string>;

const resources: QueueResources<Name>[] = queues.map(({ declaration, queue, dlq }) => {
  const worker = workers.find((w) => w.queue === declaration.name);
  return {
    name: declaration.name,
    tier: tierOf(declaration),
    sqsName: queue.nodes.queue.name,
    dlqSqsName: dlq.nodes.queue.name,
    ...(worker ? { workerFunctionName: worker.functionName } : {}),
  };
});

const region = aws.getRegionOutput().region;
const dashboard = new aws.cloudwatch.Dashboard("Dashboard", {
  dashboardName: $interpolate`${$app.name}-${$app.stage}`,
  dashboardBody: $jsonStringify(
    buildDashboardBody<Name | string>({
      region,
      queues: resources,
      // The service's nodes don't exist under `sst dev`; the pool row then shows queue metrics only.
      ...($dev
        ? {}
        : {
            pool: {
              clusterName: cluster.nodes.cluster.name,
              serviceName: pool.nodes.service.name,
              kinds: poolKinds.map((k) => ({ name: k.name, queue: k.queue })),
            },
          }),
    }),
  ),
});
export const dashboardUrl = $interpolate`https://console.aws.amazon.com/cloudwatch/home?region=${region}#dashboards:name=${dashboard.dashboardName}`;

const existingTopic = process.env.SKYFORGE_ALARM_TOPIC_ARN;
const email = process.env.SKYFORGE_ALARM_EMAIL;
const topicArn: $util.Input<string> | undefined =
  existingTopic ?? (email ? createEmailTopic(email) : undefined);

export const alarms = buildAlarms<Name>(resources).map(
  (spec) =>
    new aws.cloudwatch.MetricAlarm(spec.id, {
      name: $interpolate`${$app.name}-${$app.stage}-${spec.id}`,
      alarmDescription: spec.description,
      namespace: spec.namespace,
      metricName: spec.metricName,
      dimensions: spec.dimensions,
      statistic: spec.statistic,
      period: spec.period,
      evaluationPeriods: spec.evaluationPeriods,
      threshold: spec.threshold,
      comparisonOperator: spec.comparisonOperator,
      treatMissingData: spec.treatMissingData,
      alarmActions: topicArn ? [topicArn] : [],
      okActions: topicArn ? [topicArn] : [],
    }),
);

function createEmailTopic(address: string): $util.Output<string> {
  const topic = new aws.sns.Topic("AlarmTopic", { name: $interpolate`${$app.name}-${$app.stage}-alarms` });
  new aws.sns.TopicSubscription("AlarmEmail", { topic: topic.arn, protocol: "email", endpoint: address });
  return topic.arn;
}
