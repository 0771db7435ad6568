import { CLAIMS_PREFIX, TOKEN_OBJECTS_PATTERN } from "../../lib/claims/claim-keys.ts";
import { tierOf } from "../../lib/declarations/queue-declaration.ts";
import { type GrantCondition, grantsFor, type ResourceRef, type Role } from "../../lib/deploy-plan/grants.ts";
import { PUBLISHED_TOPICS } from "../../lib/deploy-plan/realtime-plan.ts";
import { functionName } from "./lambda-build.ts";
import { realtimeSecretArn, realtimeTopicsArn } from "./realtime-assertions.ts";
import { BOOTSTRAP } from "./rpc-stand-in.ts";
import { arnOf, inlineStatements, type PolicyStatement, type StageResources } from "./stage-resources.ts";
import { trustFailures } from "./trust-assertions.ts";

/**
 * IAM as SST rendered it, checked against lib/deploy-plan/grants.ts: each role's inline policy holds
 * exactly its plan (plus the statements SST adds for the event source and the schedules, named
 * below), and no resource is a wildcard but the table's own indexes.
 */

const canonical = (s: PolicyStatement) =>
  JSON.stringify({
    Effect: s.Effect,
    Action: [...s.Action].sort(),
    Resource: [...s.Resource].sort(),
    ...(s.Condition ? { Condition: sortedCondition(s.Condition) } : {}),
  });

/** A condition with its operators, keys and values in one order, so two renderings compare equal. */
function sortedCondition(condition: NonNullable<PolicyStatement["Condition"]>) {
  return Object.fromEntries(
    Object.entries(condition)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([test, keys]) => [
        test,
        Object.fromEntries(
          Object.entries(keys)
            .sort(([a], [b]) => a.localeCompare(b))
            .map(([key, values]) => [key, [...values].sort()]),
        ),
      ]),
  );
}

/** The statements a role's plan expands to, with this stage's ARNs. */
function planned(stage: StageResources, role: Role, own: readonly string[]): PolicyStatement[] | string {
  const missing: string[] = [];
  const arn = (ref: ResourceRef): string => {
    const table = arnOf(stage.table);
    const found =
      ref.type === "table"
        ? table
        : ref.type === "tableIndexes"
          ? table && `${table}/index/*`
          : ref.type === "queue" || ref.type === "dlq"
            ? arnOf(stage.queue(ref.queue, ref.type === "dlq"))
            : ref.type === "claimObjects"
              ? claimObjectsArn(stage)
              : ref.type === "tokenObjects"
                ? tokenObjectsArn(stage)
                : ref.type === "realtimeSecret"
                  ? realtimeSecretArn(stage)
                  : ref.type === "realtimeTopics"
                    ? realtimeTopicsArn(stage, ref.topics)
                    : arnOf(
                        stage
                          .ofType("aws:lambda/eventSourceMapping:EventSourceMapping")
                          .find((m) => m.inputs.eventSourceArn === arnOf(stage.queue(ref.queue))),
                      );
    if (!found) missing.push(`${ref.type}${"queue" in ref ? ` ${ref.queue}` : ""}`);
    return found ?? "?";
  };
  const statements = grantsFor(role, stage.report.queues, own)
    .filter((g) => g.resources.length > 0)
    .map((g) => ({
      Effect: "Allow",
      Action: [...g.actions],
      Resource: g.resources.map(arn),
      ...(g.conditions ? { Condition: iamCondition(g.conditions) } : {}),
    }));
  return missing.length > 0 ? `no resource for ${missing.join(", ")}` : statements;
}

/** A grant's conditions as IAM writes them: operator → context key → values. */
function iamCondition(conditions: readonly GrantCondition[]): NonNullable<PolicyStatement["Condition"]> {
  const out: NonNullable<PolicyStatement["Condition"]> = {};
  for (const c of conditions) out[c.test] = { ...out[c.test], [c.variable]: [...c.values] };
  return out;
}

/** Compares a role's statements with what it should hold; returns the differences. */
function compare(label: string, actual: PolicyStatement[], expected: PolicyStatement[]): string[] {
  const want = new Set(expected.map(canonical));
  const have = new Set(actual.map(canonical));
  return [
    ...[...have].filter((s) => !want.has(s)).map((s) => `${label}: extra statement ${s}`),
    ...[...want].filter((s) => !have.has(s)).map((s) => `${label}: missing statement ${s}`),
  ];
}

/** What SST's queue subscription grants the worker on its own queue, for the event source to poll. */
const EVENT_SOURCE_ACTIONS = [
  "sqs:ChangeMessageVisibility",
  "sqs:DeleteMessage",
  "sqs:GetQueueAttributes",
  "sqs:GetQueueUrl",
  "sqs:ReceiveMessage",
];

/**
 * Under `sst dev` each function is SST's bridge, which relays invocations to the developer's machine
 * through AppSync events and fetches its code from the asset bucket. SST grants these itself; they
 * exist only on dev stages, and are the one `*` the check lets through there.
 */
function devBridgeStatements(stage: StageResources): PolicyStatement[] {
  if (!stage.run.dev) return [];
  const bucket = `arn:aws:s3:::${BOOTSTRAP.asset}`;
  return [
    { Effect: "Allow", Action: ["appsync:*"], Resource: ["*"] },
    { Effect: "Allow", Action: ["s3:*"], Resource: [bucket, `${bucket}/*`] },
  ];
}

function functionRoleFailures(stage: StageResources): string[] {
  const failures: string[] = [];
  for (const fn of stage.functions) {
    const handler = stage.handlerOf(fn);
    if (!handler) continue; // reported with the functions
    const name = functionName(handler) as Role;
    const ownQueue = stage.env(fn).SKYFORGE_WORKER_QUEUE;
    const plan = planned(stage, name, ownQueue ? [ownQueue] : []);
    const role = stage.roleByArn(fn.inputs.role);
    if (!role) {
      failures.push(`function ${fn.name} has no role`);
      continue;
    }
    if (typeof plan === "string") {
      failures.push(`role ${role.name}: ${plan}`);
      continue;
    }
    const eventSource =
      name === "worker"
        ? [
            {
              Effect: "Allow",
              Action: EVENT_SOURCE_ACTIONS,
              Resource: [arnOf(stage.queue(ownQueue ?? "")) ?? "?"],
            },
          ]
        : [];
    const expected = [...plan, ...eventSource, ...devBridgeStatements(stage)];
    failures.push(...compare(`role ${role.name} (${name})`, inlineStatements(role), expected));
  }
  return failures;
}

function poolRoleFailures(stage: StageResources): string[] {
  const task = stage.ofType("aws:ecs/taskDefinition:TaskDefinition")[0];
  if (!task) return stage.run.dev || stage.report.poolKinds.length === 0 ? [] : ["no ECS task definition"];
  const { queues, poolKinds } = stage.report;
  const served = queues
    .filter((q) => tierOf(q) === "pool" && poolKinds.some((k) => k.queue === q.name))
    .map((q) => q.name);
  const plan = planned(stage, "pool", served);
  const taskRole = stage.roleByArn(task.inputs.taskRoleArn);
  const executionRole = stage.roleByArn(task.inputs.executionRoleArn);
  if (!taskRole || !executionRole) return ["the pool task lacks a task or execution role"];
  if (typeof plan === "string") return [`role ${taskRole.name}: ${plan}`];
  return [
    ...compare(`role ${taskRole.name} (pool)`, inlineStatements(taskRole), plan),
    // The execution role pulls the image and writes logs through AWS's managed policy only.
    ...compare(`role ${executionRole.name} (pool execution)`, inlineStatements(executionRole), []),
  ];
}

/** EventBridge Scheduler's roles may only invoke their own target. */
function scheduleRoleFailures(stage: StageResources): string[] {
  return stage.ofType("aws:scheduler/schedule:Schedule").flatMap((schedule) => {
    const target = schedule.inputs.target as { arn: string; roleArn: string };
    const role = stage.roleByArn(target.roleArn);
    if (!role) return [`schedule ${schedule.name} has no role`];
    const expected = [{ Effect: "Allow", Action: ["lambda:InvokeFunction"], Resource: [target.arn] }];
    return compare(`role ${role.name} (schedule)`, inlineStatements(role), expected);
  });
}

/** The component's claims bucket's ARN. */
function claimsBucketArn(stage: StageResources): string | undefined {
  return arnOf(stage.ofType("aws:s3/bucket:Bucket").find((b) => b.name.startsWith(`${stage.prefix}Claims`)));
}

/** `<claims bucket arn>/claims/*`: the claim check's objects and nothing else of the bucket. */
function claimObjectsArn(stage: StageResources): string | undefined {
  const bucket = claimsBucketArn(stage);
  return bucket && `${bucket}/${CLAIMS_PREFIX}*`;
}

/** `<claims bucket arn>/` and TOKEN_OBJECTS_PATTERN: the token callback's objects, no other of the bucket. */
function tokenObjectsArn(stage: StageResources): string | undefined {
  const bucket = claimsBucketArn(stage);
  return bucket && `${bucket}/${TOKEN_OBJECTS_PATTERN}`;
}

/**
 * No role may name every resource, or a wildcard but `<table>/index/*`, the claim objects' prefix,
 * the token objects' pattern and the stack's own realtime topic trees.
 */
function wildcardFailures(stage: StageResources): string[] {
  const allowed = new Set([
    `${arnOf(stage.table)}/index/*`,
    claimObjectsArn(stage),
    tokenObjectsArn(stage),
    ...PUBLISHED_TOPICS.map((topics) => realtimeTopicsArn(stage, topics)),
  ]);
  const bridge = new Set(devBridgeStatements(stage).map(canonical));
  return stage.ofType("aws:iam/role:Role").flatMap((role) =>
    inlineStatements(role)
      .filter((s) => !bridge.has(canonical(s)))
      .flatMap((s) => s.Resource)
      .filter((r) => r.includes("*") && !allowed.has(r))
      .map((r) => `role ${role.name}: wildcard resource ${r}`),
  );
}

export function iamFailures(stage: StageResources): string[] {
  return [
    ...functionRoleFailures(stage),
    ...poolRoleFailures(stage),
    ...scheduleRoleFailures(stage),
    ...wildcardFailures(stage),
    ...trustFailures(stage),
  ];
}
