import { tierOf } from "../lib/declarations/queue-declaration";
import { withPoolPrivileges } from "../lib/deploy-plan/pool-capabilities";
import { poolScaling, stepAdjustments } from "../lib/deploy-plan/pool-scaling";
import { pascalCase } from "../lib/deploy-plan/resource-names";
import { apiUrl } from "./api-gateway";
import { permissionsFor } from "./permissions";
import { poolConfigEnv, poolKinds } from "./pool-config";
import { queues, queueUrls } from "./queues";
import { storage } from "./storage-env";

/**
 * The Fargate pool for heavy kinds (infra/pool.Dockerfile, functions/pool/main.ts): arm64, scaled
 * on the pool queues' backlog from 0. The VPC has no NAT gateway: tasks get public IPs in public
 * subnets to reach SQS and DynamoDB, and nothing listens for inbound traffic.
 */
const poolQueues = queues.filter((q) => tierOf(q.declaration) === "pool");
const served = poolQueues.filter((q) => poolKinds.some((k) => k.queue === q.declaration.name));

export const vpc = new sst.aws.Vpc("Vpc");
export const cluster = new sst.aws.Cluster("Cluster", { vpc });
const taskPermissions = permissionsFor(
  "pool",
  served.map((q) => q.declaration.name),
);
export const pool = new sst.aws.Service("Pool", {
  cluster,
  image: { context: ".", dockerfile: "infra/pool.Dockerfile" },
  architecture: "arm64",
  cpu: "1 vCPU",
  memory: "2 GB",
  permissions: taskPermissions,
  environment: {
    ...storage,
    SKYFORGE_QUEUE_URLS: queueUrls,
    // Under the task's 30 s stop timeout: running jobs get 25 s after SIGTERM, the rest are handed back.
    SKYFORGE_POOL_DRAIN_SECONDS: "25",
    // Each child runs as a user of its own, without capabilities; a task that can't do that doesn't
    // start (exit 78) rather than run children that could read its credentials (lib/pool/child-users.ts).
    // Under `sst dev` the pool runs on your machine, as npm start does: there it prefers it.
    ...($dev ? {} : { SKYFORGE_POOL_CHILD_USERS: "required" }),
    ...apiUrl,
    ...poolConfigEnv,
  },
  logging: { retention: "1 month" },
  scaling: { min: poolScaling.min, max: poolScaling.max, cpuUtilization: false, memoryUtilization: false },
  transform: {
    // SST also grants ECS Exec's ssmmessages:* and SSM/Secrets Manager reads on "*". The pool uses
    // neither (no exec, no container secrets), so each role holds only the grants plan.
    taskRole: (args) => {
      args.inlinePolicies = [
        { name: "inline", policy: aws.iam.getPolicyDocumentOutput({ statements: taskPermissions }).json },
      ];
    },
    executionRole: (args) => {
      args.inlinePolicies = [];
    },
    // The pool runs as root with only the capabilities that switching its children's users takes;
    // every other one Docker grants is dropped (lib/deploy-plan/pool-capabilities.ts says why root).
    taskDefinition: (args) => {
      args.containerDefinitions = $output(args.containerDefinitions).apply(withPoolPrivileges);
    },
    // SST turns ECS Exec on for every service: off, so no one opens a shell in a running task.
    service: (args) => {
      args.enableExecuteCommand = false;
    },
  },
  // Under `sst dev` the pool runs on your machine against the deployed queues and table, like a Lambda.
  dev: { command: "node --import tsx functions/pool/main.ts" },
});

// Under `sst dev` the service (and its scalable target) is not deployed.
if (!$dev) {
  const target = pool.nodes.autoScalingTarget;
  const stepPolicy = (
    name: string,
    config: aws.types.input.appautoscaling.PolicyStepScalingPolicyConfiguration,
  ) =>
    new aws.appautoscaling.Policy(name, {
      serviceNamespace: target.serviceNamespace,
      scalableDimension: target.scalableDimension,
      resourceId: target.resourceId,
      policyType: "StepScaling",
      stepScalingPolicyConfiguration: { metricAggregationType: "Maximum", ...config },
    });
  const scaleOut = stepPolicy("PoolScaleOut", {
    adjustmentType: "ChangeInCapacity",
    cooldown: poolScaling.scaleOutCooldownSeconds,
    stepAdjustments: stepAdjustments(poolScaling.scaleOutSteps),
  });
  const scaleIn = stepPolicy("PoolScaleIn", {
    adjustmentType: "ExactCapacity",
    cooldown: 300,
    stepAdjustments: [{ metricIntervalUpperBound: "0", scalingAdjustment: poolScaling.min }],
  });
  for (const q of served) {
    new aws.cloudwatch.MetricAlarm(`PoolBacklog${pascalCase(q.declaration.name)}`, {
      alarmDescription: `skyforge pool: messages waiting on ${q.declaration.name}; add tasks`,
      namespace: "AWS/SQS",
      metricName: "ApproximateNumberOfMessagesVisible",
      dimensions: { QueueName: q.queue.nodes.queue.name },
      statistic: "Maximum",
      period: 60,
      evaluationPeriods: 1,
      threshold: 0,
      comparisonOperator: "GreaterThanThreshold",
      treatMissingData: "notBreaching",
      alarmActions: [scaleOut.arn],
    });
  }
  // Idle = nothing visible and nothing in flight on any pool queue, for the whole window.
  const metrics = served.flatMap((q, i) =>
    ["ApproximateNumberOfMessagesVisible", "ApproximateNumberOfMessagesNotVisible"].map((metricName, j) => ({
      id: `m${i}_${j}`,
      metric: {
        namespace: "AWS/SQS",
        metricName,
        dimensions: { QueueName: q.queue.nodes.queue.name },
        period: 60,
        stat: "Maximum",
      },
    })),
  );
  if (metrics.length > 0) {
    new aws.cloudwatch.MetricAlarm("PoolIdle", {
      alarmDescription: "skyforge pool: no work visible or in flight; scale to the minimum",
      metricQueries: [
        ...metrics,
        { id: "backlog", expression: `SUM([${metrics.map((m) => m.id).join(",")}])`, returnData: true },
      ],
      evaluationPeriods: poolScaling.idleMinutesBeforeScaleIn,
      threshold: 0,
      comparisonOperator: "LessThanOrEqualToThreshold",
      treatMissingData: "breaching",
      alarmActions: [scaleIn.arn],
    });
  }
}
