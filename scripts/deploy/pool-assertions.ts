import { tierOf } from "../../lib/declarations/queue-declaration.ts";
import {
  POOL_CAPABILITIES,
  POOL_DROPPED_CAPABILITIES,
  type PoolContainerPrivileges,
} from "../../lib/deploy-plan/pool-capabilities.ts";
import { poolScaling, stepAdjustments } from "../../lib/deploy-plan/pool-scaling.ts";
import { pascalCase } from "../../lib/deploy-plan/resource-names.ts";
import type { RecordedResource } from "./pulumi-mocks.ts";
import { arnOf, type StageResources, type TaskContainer, taskContainers } from "./stage-resources.ts";

/**
 * The Fargate pool as SST registered it: an arm64 task from infra/pool.Dockerfile with separate
 * roles, no task at rest, step scaling on the backlog of the queues it serves, and a drain that fits
 * in the stop timeout, a container that runs as root with only the capabilities that starting each
 * child as a user of its own takes, and requires it. Under `sst dev` none of it is deployed: the pool runs locally, as SST's
 * DevCommand (its command is checked in test/e2e/infra-real.test.ts, which can see component outputs).
 */

const SCALING_TYPES = ["aws:appautoscaling/target:Target", "aws:appautoscaling/policy:Policy"];
/** What ECS gives a task between SIGTERM and SIGKILL when the container sets no stopTimeout. */
const DEFAULT_STOP_TIMEOUT_SECONDS = 30;
/** After the drain, the pool hands unstarted messages back and exits; this is its time to do so. */
const HAND_BACK_SECONDS = 5;

function devFailures(stage: StageResources): string[] {
  const failures: string[] = [];
  if (
    stage.ofType("aws:ecs/taskDefinition:TaskDefinition").length > 0 ||
    stage.ofType("aws:ecs/service:Service").length > 0
  ) {
    failures.push("sst dev deploys the pool service; it should run locally");
  }
  for (const type of SCALING_TYPES) {
    for (const r of stage.ofType(type)) failures.push(`sst dev declares the pool scaling resource ${r.name}`);
  }
  for (const a of stage.ofType("aws:cloudwatch/metricAlarm:MetricAlarm")) {
    if (a.name.startsWith(`${stage.prefix}Pool`))
      failures.push(`sst dev declares the pool scaling alarm ${a.name}`);
  }
  if (stage.report.poolKinds.length > 0 && !stage.named("sst:sst:DevCommand", `${stage.prefix}PoolDev`))
    failures.push("sst dev has no local command for the pool");
  return failures;
}

function taskFailures(stage: StageResources, task: RecordedResource): string[] {
  const failures: string[] = [];
  const platform = task.inputs.runtimePlatform as { cpuArchitecture?: string } | undefined;
  if (platform?.cpuArchitecture !== "ARM64") failures.push(`the pool task is ${platform?.cpuArchitecture}`);
  if (!task.inputs.taskRoleArn || task.inputs.taskRoleArn === task.inputs.executionRoleArn) {
    failures.push("the pool task and execution roles must be separate");
  }
  const image = stage.ofType("docker-build:index:Image")[0]?.inputs as
    | { context?: { location?: string }; dockerfile?: { location?: string }; platforms?: string[] }
    | undefined;
  const dockerfile = stage.report.poolImage?.dockerfile ?? "(none)";
  if (!image?.dockerfile?.location?.endsWith(`/${dockerfile}`) || image.platforms?.join() !== "linux/arm64") {
    failures.push(
      `the pool image is built from ${image?.dockerfile?.location} for ${image?.platforms?.join()}`,
    );
  }
  for (const c of taskContainers(task)) {
    const drain = Number(c.environment?.find((e) => e.name === "SKYFORGE_POOL_DRAIN_SECONDS")?.value);
    const stop = c.stopTimeout ?? DEFAULT_STOP_TIMEOUT_SECONDS;
    if (!Number.isInteger(drain) || drain <= 0 || drain + HAND_BACK_SECONDS > stop) {
      failures.push(
        `the pool drains ${drain} s, which must leave ${HAND_BACK_SECONDS} s of the ${stop} s stop timeout`,
      );
    }
  }
  failures.push(...privilegeFailures(task));
  return failures;
}

/**
 * The pool's privileges: root with every default capability but the five it needs dropped, none
 * added, and the setting that makes the pool refuse to run a child as itself.
 */
function privilegeFailures(task: RecordedResource): string[] {
  const failures: string[] = [];
  const containers = taskContainers(task) as (TaskContainer & PoolContainerPrivileges)[];
  for (const c of containers) {
    const users = c.environment?.find((e) => e.name === "SKYFORGE_POOL_CHILD_USERS")?.value;
    if (users !== "required") {
      failures.push(
        `the pool task sets SKYFORGE_POOL_CHILD_USERS=${users}; its children must run as users of their own`,
      );
    }
    if (c.user !== "0")
      failures.push(
        `the pool container runs as user ${c.user}; it must be root to switch its children's users`,
      );
    const caps = c.linuxParameters?.capabilities;
    const kept = POOL_DROPPED_CAPABILITIES.filter((cap) => !caps?.drop?.includes(cap));
    if (kept.length > 0)
      failures.push(`the pool container keeps capabilities it doesn't need: ${kept.join(", ")}`);
    const lost = POOL_CAPABILITIES.filter((cap) => caps?.drop?.includes(cap) || caps?.drop?.includes("ALL"));
    if (lost.length > 0)
      failures.push(`the pool container drops ${lost.join(", ")}, which it needs to switch users`);
    if ((caps?.add ?? []).length > 0)
      failures.push(`the pool container adds capabilities: ${caps?.add?.join(", ")}`);
  }
  return failures;
}

/** Backlog step scaling from zero tasks: out on any visible message, in after the idle window. */
function scalingFailures(stage: StageResources): string[] {
  const failures: string[] = [];
  const target = stage.ofType("aws:appautoscaling/target:Target")[0];
  if (target?.inputs.minCapacity !== 0 || target.inputs.maxCapacity !== stage.report.poolMaxTasks) {
    failures.push(
      `the pool scales ${target?.inputs.minCapacity}..${target?.inputs.maxCapacity} tasks; an idle pool must run none`,
    );
  }
  const service = stage.ofType("aws:ecs/service:Service")[0];
  if (service?.inputs.desiredCount !== 0)
    failures.push(`the pool service starts ${service?.inputs.desiredCount} tasks`);
  const policies = stage.ofType("aws:appautoscaling/policy:Policy");
  const names = policies.map((p) => p.name.slice(stage.prefix.length)).sort();
  if (names.join() !== "PoolScaleIn,PoolScaleOut")
    failures.push(`the pool's scaling policies are ${names.join(", ")}`);
  const config = (name: string) =>
    stage.named("aws:appautoscaling/policy:Policy", `${stage.prefix}${name}`)?.inputs
      .stepScalingPolicyConfiguration as { adjustmentType?: string; stepAdjustments?: unknown[] } | undefined;
  const out = config("PoolScaleOut");
  if (
    out?.adjustmentType !== "ChangeInCapacity" ||
    JSON.stringify(out.stepAdjustments) !== JSON.stringify(stepAdjustments(poolScaling.scaleOutSteps))
  ) {
    failures.push(`the pool scales out by ${JSON.stringify(out)}`);
  }
  const scaleIn = config("PoolScaleIn");
  if (
    scaleIn?.adjustmentType !== "ExactCapacity" ||
    JSON.stringify(
      scaleIn.stepAdjustments?.map((s) => (s as { scalingAdjustment?: number }).scalingAdjustment),
    ) !== "[0]"
  ) {
    failures.push(`the pool scales in by ${JSON.stringify(scaleIn)}`);
  }
  const policyArn = (name: string) =>
    arnOf(stage.named("aws:appautoscaling/policy:Policy", `${stage.prefix}${name}`));
  const { queues, poolKinds } = stage.report;
  const served = queues.filter((q) => tierOf(q) === "pool" && poolKinds.some((k) => k.queue === q.name));
  for (const q of served) {
    const alarm = stage.named(
      "aws:cloudwatch/metricAlarm:MetricAlarm",
      `${stage.prefix}PoolBacklog${pascalCase(q.name)}`,
    )?.inputs;
    const watched = (alarm?.dimensions as { QueueName?: string } | undefined)?.QueueName;
    if (
      alarm?.metricName !== "ApproximateNumberOfMessagesVisible" ||
      watched !== stage.queue(q.name)?.inputs.name ||
      alarm.threshold !== 0 ||
      alarm.comparisonOperator !== "GreaterThanThreshold" ||
      JSON.stringify(alarm.alarmActions) !== JSON.stringify([policyArn("PoolScaleOut")])
    ) {
      failures.push(`queue ${q.name}'s backlog does not scale the pool out`);
    }
  }
  const idle = stage.named("aws:cloudwatch/metricAlarm:MetricAlarm", `${stage.prefix}PoolIdle`)?.inputs;
  if (
    served.length > 0 &&
    JSON.stringify(idle?.alarmActions) !== JSON.stringify([policyArn("PoolScaleIn")])
  ) {
    failures.push("the pool's idle alarm does not scale it in");
  }
  return failures;
}

/** Pool resources of a component whose app declares no pool kind. */
function absentPoolFailures(stage: StageResources): string[] {
  const pooled = stage.resources.filter(
    (r) => /^aws:(ecs|appautoscaling)\//.test(r.type) || r.type === "sst:aws:Service",
  );
  return pooled.map((r) => `the app declares no pool kind, yet ${r.type} ${r.name} is planned`);
}

export function poolFailures(stage: StageResources): string[] {
  if (stage.report.poolKinds.length === 0) return absentPoolFailures(stage);
  if (stage.run.dev) return devFailures(stage);
  const task = stage.ofType("aws:ecs/taskDefinition:TaskDefinition")[0];
  if (!task) return ["no pool task definition"];
  return [...taskFailures(stage, task), ...scalingFailures(stage)];
}
