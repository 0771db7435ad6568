import { ACCOUNT, type RecordedResource } from "./pulumi-mocks.ts";
import type { StageResources } from "./stage-resources.ts";

/**
 * Who may assume each role, and which AWS managed policies it carries, as SST rendered them
 * (infra/role-trust.ts). Each role must trust exactly its service with an aws:SourceAccount
 * condition; under `sst dev`, the Lambda and pool task roles carry SST's dev policy instead, which
 * adds the account (the CLI runs them on the developer's machine with their credentials). Exact
 * comparison: a principal, a statement, a dropped condition or a managed policy more fails. So does
 * any IAM resource but a role (a policy attached beside the role escapes the inline check).
 */

type RoleKind = "lambda" | "pool task" | "pool execution" | "schedule";

interface RoleExpectation {
  trust: unknown[];
  managedPolicies: string[];
}

const onlyService = (service: string) => [
  {
    Effect: "Allow",
    Action: "sts:AssumeRole",
    Principal: { Service: service },
    Condition: { StringEquals: { "aws:SourceAccount": ACCOUNT } },
  },
];

/** SST's `sst dev` trust policies, which the dev stage keeps. */
const devTrust: Partial<Record<RoleKind, unknown[]>> = {
  lambda: [
    {
      Effect: "Allow",
      Action: "sts:AssumeRole",
      Principal: { Service: "lambda.amazonaws.com", AWS: `arn:aws:iam::${ACCOUNT}:root` },
    },
  ],
  "pool task": [
    {
      Effect: "Allow",
      Action: "sts:AssumeRole",
      Principal: { Service: "ecs-tasks.amazonaws.com", AWS: ACCOUNT },
    },
  ],
};

const services: Record<RoleKind, string> = {
  lambda: "lambda.amazonaws.com",
  "pool task": "ecs-tasks.amazonaws.com",
  "pool execution": "ecs-tasks.amazonaws.com",
  schedule: "scheduler.amazonaws.com",
};

const managed: Record<RoleKind, string[]> = {
  // CloudWatch Logs for the function's own log group.
  lambda: ["arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole"],
  "pool task": [],
  // Pulls the image from ECR and writes the task's logs.
  "pool execution": ["arn:aws:iam::aws:policy/service-role/AmazonECSTaskExecutionRolePolicy"],
  schedule: [],
};

function expectation(kind: RoleKind, dev: boolean): RoleExpectation {
  return {
    trust: (dev ? devTrust[kind] : undefined) ?? onlyService(services[kind]),
    managedPolicies: managed[kind],
  };
}

const asList = (v: unknown): unknown[] => (Array.isArray(v) ? v : v === undefined ? [] : [v]);
const sortedList = (v: unknown) => asList(v).map(String).sort();
const byKey = <T>(entries: [string, T][]) =>
  Object.fromEntries(entries.sort(([a], [b]) => a.localeCompare(b)));

/**
 * A trust policy in one spelling: scalars as one-element lists, keys and lists sorted, Sid dropped.
 * Every other key stays, so a NotPrincipal or a Resource shows as a difference.
 */
export function canonicalTrust(policy: unknown): string {
  const doc = (typeof policy === "string" ? JSON.parse(policy) : policy) as
    | { Statement?: unknown }
    | undefined;
  const statements = asList(doc?.Statement).map((raw) => {
    const { Sid: _sid, Action, Principal, Condition, ...rest } = raw as Record<string, unknown>;
    return JSON.stringify(
      byKey<unknown>([
        ...Object.entries(rest),
        ["Action", sortedList(Action)],
        ["Principal", byKey(Object.entries(Principal ?? {}).map(([k, v]) => [k, sortedList(v)]))],
        [
          "Condition",
          byKey(
            Object.entries(Condition ?? {}).map(([op, keys]) => [
              op,
              byKey(Object.entries(keys as object).map(([k, v]) => [k, sortedList(v)])),
            ]),
          ),
        ],
      ]),
    );
  });
  return `[${statements.sort().join(",")}]`;
}

/** Each role, with what assumes it: found through the resource that names its ARN. */
function rolesByKind(stage: StageResources): Map<RecordedResource, RoleKind> {
  const kinds = new Map<RecordedResource, RoleKind>();
  const mark = (arn: unknown, kind: RoleKind) => {
    const role = stage.roleByArn(arn);
    if (role) kinds.set(role, kind);
  };
  for (const fn of stage.functions) mark(fn.inputs.role, "lambda");
  for (const task of stage.ofType("aws:ecs/taskDefinition:TaskDefinition")) {
    mark(task.inputs.taskRoleArn, "pool task");
    mark(task.inputs.executionRoleArn, "pool execution");
  }
  for (const schedule of stage.ofType("aws:scheduler/schedule:Schedule")) {
    mark((schedule.inputs.target as { roleArn?: unknown } | undefined)?.roleArn, "schedule");
  }
  // Under `sst dev` the pool has no task definition, but SST still creates its task role.
  const devTaskRole = stage.named("aws:iam/role:Role", `${stage.prefix}PoolTaskRole`);
  if (stage.run.dev && devTaskRole && !kinds.has(devTaskRole)) kinds.set(devTaskRole, "pool task");
  return kinds;
}

export function trustFailures(stage: StageResources): string[] {
  const failures: string[] = [];
  const kinds = rolesByKind(stage);
  for (const role of stage.ofType("aws:iam/role:Role")) {
    const kind = kinds.get(role);
    if (!kind) {
      failures.push(`role ${role.name} serves no function, pool task or schedule`);
      continue;
    }
    const want = expectation(kind, stage.run.dev);
    const trust = canonicalTrust(role.inputs.assumeRolePolicy);
    if (trust !== canonicalTrust({ Statement: want.trust })) {
      failures.push(
        `role ${role.name} (${kind}): trusts ${trust}; expected ${canonicalTrust({ Statement: want.trust })}`,
      );
    }
    const policies = sortedList(role.inputs.managedPolicyArns);
    if (JSON.stringify(policies) !== JSON.stringify([...want.managedPolicies].sort())) {
      failures.push(
        `role ${role.name} (${kind}): managed policies ${JSON.stringify(policies)}; expected ${JSON.stringify(want.managedPolicies)}`,
      );
    }
  }
  const otherIam = stage.resources.filter(
    (r) => r.type.startsWith("aws:iam/") && r.type !== "aws:iam/role:Role",
  );
  for (const r of otherIam) failures.push(`unexpected IAM resource ${r.type} ${r.name}`);
  return failures;
}
