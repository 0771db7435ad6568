import { tierOf } from "../lib/declarations/queue-declaration";
import { buildAlarms } from "../lib/deploy-plan/alarms";
import { buildDashboardBody } from "../lib/deploy-plan/dashboard";
import type { QueueResources } from "../lib/deploy-plan/queue-resources";
import { type Build, childName, childOpts } from "./build";
import type { Pool } from "./pool";
import type { Queues } from "./queues";
import { transformed } from "./skyforge-args";
import type { Workers } from "./workers";

type Name = $util.Output<string>;

/**
 * The dashboard and alarms, both built by pure functions in lib/deploy-plan from the same
 * declarations. Notifications are optional, chosen by the component's `alarms`: `topic` names an
 * existing SNS topic; otherwise `email` creates a topic with that address subscribed (AWS mails a
 * confirmation link first). With neither, alarms only change state on the dashboard. Physical
 * names carry the app, the stage and the component's name, so two components never share one.
 */
export function createMonitoring(build: Build, queues: Queues, workers: Workers, pool: Pool | undefined) {
  const resources: QueueResources<Name>[] = queues.queues.map(({ declaration, queue, dlq }) => {
    const worker = workers.workers.find((w) => w.queue === declaration.name);
    return {
      name: declaration.name,
      tier: tierOf(declaration),
      sqsName: queue.nodes.queue.name,
      dlqSqsName: dlq.nodes.queue.name,
      ...(worker ? { workerFunctionName: worker.functionName } : {}),
    };
  });
  const physical = (part: string) => $interpolate`${$app.name}-${$app.stage}-${build.name}${part}`;

  const region = aws.getRegionOutput().region;
  const dashboardName = childName(build, "Dashboard");
  const dashboard = new aws.cloudwatch.Dashboard(
    dashboardName,
    transformed(
      build.args.transform?.dashboard,
      dashboardName,
      {
        dashboardName: physical(""),
        dashboardBody: $jsonStringify(
          buildDashboardBody<Name | string>({
            region,
            queues: resources,
            // The service's nodes don't exist under `sst dev`; the pool row then shows queue metrics only.
            ...(pool && !$dev
              ? {
                  pool: {
                    clusterName: pool.cluster.nodes.cluster.name,
                    serviceName: pool.pool.nodes.service.name,
                    kinds: build.poolKinds.map((k) => ({ name: k.name, queue: k.queue })),
                  },
                }
              : {}),
          }),
        ),
      },
      childOpts(build),
    ),
    childOpts(build),
  );
  const dashboardUrl = $interpolate`https://console.aws.amazon.com/cloudwatch/home?region=${region}#dashboards:name=${dashboard.dashboardName}`;

  const { topic, email } = build.args.alarms ?? {};
  const topicArn: $util.Input<string> | undefined =
    topic ?? (email ? emailTopic(build, email, physical) : undefined);

  const alarms = buildAlarms<Name>(resources).map((spec) => {
    const name = childName(build, spec.id);
    return new aws.cloudwatch.MetricAlarm(
      name,
      transformed(
        build.args.transform?.alarm,
        name,
        {
          name: physical(spec.id),
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
        },
        childOpts(build),
      ),
      childOpts(build),
    );
  });
  return { dashboard, dashboardUrl, alarms };
}

function emailTopic(build: Build, address: string, physical: (part: string) => $util.Output<string>) {
  const topic = new aws.sns.Topic(
    childName(build, "AlarmTopic"),
    { name: physical("Alarms") },
    childOpts(build),
  );
  new aws.sns.TopicSubscription(
    childName(build, "AlarmEmail"),
    { topic: topic.arn, protocol: "email", endpoint: address },
    childOpts(build),
  );
  return topic.arn;
}
