import { tierOf } from "../lib/declarations/queue-declaration";
import { withPoolPrivileges } from "../lib/deploy-plan/pool-capabilities";
import { poolScaling, stepAdjustments } from "../lib/deploy-plan/pool-scaling";
import { pascalCase } from "../lib/deploy-plan/resource-names";
import { type Build, childName, childOpts, poolConfigEnv } from "./build";
import { type GrantTargets, permissionsFor } from "./permissions";
import { poolTrust } from "./role-trust";
import { transformed } from "./skyforge-args";

/**
 * The Fargate pool for heavy kinds (infra/pool.Dockerfile, functions/handlers.ts startPool): arm64,
 * scaled on the pool queues' backlog from 0. The VPC has no NAT gateway: tasks get public IPs in
 * public subnets to reach SQS and DynamoDB, and nothing listens for inbound traffic. Created only
 * when the app declares pool kinds.
 */
export function createPool(
  build: Build,
  targets: GrantTargets,
  apiUrl: Record<string, $util.Input<string>>,
  image: { context: string; dockerfile: string },
) {
  const served = targets.queues.queues.filter(
    (q) => tierOf(q.declaration) === "pool" && build.poolKinds.some((k) => k.queue === q.declaration.name),
  );
  const vpc = new sst.aws.Vpc(childName(build, "Vpc"), {}, childOpts(build));
  const cluster = new sst.aws.Cluster(childName(build, "Cluster"), { vpc }, childOpts(build));
  const taskPermissions = permissionsFor(
    build,
    targets,
    "pool",
    served.map((q) => q.declaration.name),
  );
  const maxTasks = build.args.pool?.maxTasks ?? poolScaling.max;
  const name = childName(build, "Pool");
  const args = transformed(
    build.args.transform?.pool,
    name,
    {
      cluster,
      image,
      architecture: "arm64",
      cpu: "1 vCPU",
      memory: "2 GB",
      permissions: taskPermissions,
      environment: {
        ...targets.storage.env,
        SKYFORGE_QUEUE_URLS: targets.queues.queueUrls,
        // Under the task's 30 s stop timeout: running jobs get 25 s after SIGTERM, the rest are handed back.
        SKYFORGE_POOL_DRAIN_SECONDS: "25",
        // Each child runs as a user of its own, without capabilities; a task that can't do that doesn't
        // start (exit 78) rather than run children that could read its credentials (lib/pool/child-users.ts).
        // Under `sst dev` the pool runs on your machine, as npm start does: there it prefers it.
        ...($dev ? {} : { SKYFORGE_POOL_CHILD_USERS: "required" }),
        ...apiUrl,
        ...poolConfigEnv(build),
        ...targets.realtime.env,
      },
      logging: { retention: "1 month" },
      scaling: { min: poolScaling.min, max: maxTasks, cpuUtilization: false, memoryUtilization: false },
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
      dev: { command: `node --import tsx ${build.poolEntry}` },
    } satisfies sst.aws.ServiceArgs,
    childOpts(build),
  );
  const pool = new sst.aws.Service(name, poolTrust(args), childOpts(build));
  // Under `sst dev` the service (and its scalable target) is not deployed.
  if (!$dev)
    scaleOnBacklog(
      build,
      pool,
      served.map((q) => ({ name: q.declaration.name, sqsName: q.queue.nodes.queue.name })),
    );
  return { vpc, cluster, pool };
}
export type Pool = ReturnType<typeof createPool>;

/** Step scaling on the served queues' backlog: out on any visible message, in after the idle window. */
function scaleOnBacklog(
  build: Build,
  pool: sst.aws.Service,
  served: { name: string; sqsName: $util.Output<string> }[],
): void {
  const target = pool.nodes.autoScalingTarget;
  const stepPolicy = (
    part: string,
    config: aws.types.input.appautoscaling.PolicyStepScalingPolicyConfiguration,
  ) =>
    new aws.appautoscaling.Policy(
      childName(build, part),
      {
        serviceNamespace: target.serviceNamespace,
        scalableDimension: target.scalableDimension,
        resourceId: target.resourceId,
        policyType: "StepScaling",
        stepScalingPolicyConfiguration: { metricAggregationType: "Maximum", ...config },
      },
      childOpts(build),
    );
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
    new aws.cloudwatch.MetricAlarm(
      childName(build, `PoolBacklog${pascalCase(q.name)}`),
      {
        alarmDescription: `skyforge pool: messages waiting on ${q.name}; add tasks`,
        namespace: "AWS/SQS",
        metricName: "ApproximateNumberOfMessagesVisible",
        dimensions: { QueueName: q.sqsName },
        statistic: "Maximum",
        period: 60,
        evaluationPeriods: 1,
        threshold: 0,
        comparisonOperator: "GreaterThanThreshold",
        treatMissingData: "notBreaching",
        alarmActions: [scaleOut.arn],
      },
      childOpts(build),
    );
  }
  // Idle = nothing visible and nothing in flight on any pool queue, for the whole window.
  const metrics = served.flatMap((q, i) =>
    ["ApproximateNumberOfMessagesVisible", "ApproximateNumberOfMessagesNotVisible"].map((metricName, j) => ({
      id: `m${i}_${j}`,
      metric: {
        namespace: "AWS/SQS",
        metricName,
        dimensions: { QueueName: q.sqsName },
        period: 60,
        stat: "Maximum",
      },
    })),
  );
  if (metrics.length === 0) return;
  new aws.cloudwatch.MetricAlarm(
    childName(build, "PoolIdle"),
    {
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
    },
    childOpts(build),
  );
}
