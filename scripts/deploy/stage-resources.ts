import type { ComponentReport } from "../../infra/component-report.ts";
import { pascalCase } from "../../lib/deploy-plan/resource-names.ts";
import type { RecordedResource } from "./pulumi-mocks.ts";
import type { StageRun } from "./sst-program.ts";

/**
 * Lookups over the resources SST registered for one stage, by AWS type and by what they belong to:
 * one Skyforge component's (its own resources and nothing of the project's or another
 * component's), or the whole stage's when no component is given.
 */
export class StageResources {
  readonly resources: RecordedResource[];

  readonly run: StageRun;
  readonly component?: ComponentReport;

  constructor(run: StageRun, component?: ComponentReport) {
    this.run = run;
    this.component = component;
    this.resources = component ? run.resources.filter((r) => r.component === component.name) : run.resources;
  }

  /** The component's name: every one of its resources' logical names starts with it. */
  get prefix(): string {
    return this.component?.name ?? "";
  }

  /** The component it is scoped to; an assertion over a component's resources needs one. */
  get report(): ComponentReport {
    if (!this.component) throw new Error("these lookups are not scoped to a Skyforge component");
    return this.component;
  }

  ofType(type: string): RecordedResource[] {
    return this.resources.filter((r) => r.type === type);
  }

  /** The one resource of a type with that Pulumi name (SST names children after their component). */
  named(type: string, name: string): RecordedResource | undefined {
    return this.ofType(type).find((r) => r.name === name);
  }

  get functions(): RecordedResource[] {
    return this.ofType("aws:lambda/function:Function");
  }

  /** The handler (".sst/skyforge/Jobs/worker.handler") of a Lambda function, from its build or its dev target. */
  handlerOf(fn: RecordedResource): string | undefined {
    const id = fn.name.replace(/Function$/, "");
    return (
      this.run.builds.find((b) => b.functionID === id)?.handler ??
      this.run.devTargets.find((t) => t.functionID === id)?.handler
    );
  }

  functionByArn(arn: unknown): RecordedResource | undefined {
    return this.functions.find((f) => typeof arn === "string" && arn.endsWith(`:function:${f.inputs.name}`));
  }

  roleByArn(arn: unknown): RecordedResource | undefined {
    return this.ofType("aws:iam/role:Role").find(
      (r) => typeof arn === "string" && arn.endsWith(`:role/${r.inputs.name}`),
    );
  }

  /** The SQS queue of a declared queue (`dlq` for its dead-letter queue). */
  queue(declared: string, dlq = false): RecordedResource | undefined {
    return this.named(
      "aws:sqs/queue:Queue",
      `${this.prefix}${pascalCase(declared)}${dlq ? "Dlq" : "Queue"}Queue`,
    );
  }

  get table(): RecordedResource | undefined {
    return this.ofType("aws:dynamodb/table:Table")[0];
  }

  env(fn: RecordedResource): Record<string, string> {
    return ((fn.inputs.environment as { variables?: Record<string, string> } | undefined)?.variables ??
      {}) as Record<string, string>;
  }
}

/** The ARN the mocks gave a resource. */
export function arnOf(resource: RecordedResource | undefined): string | undefined {
  return resource?.outputs.arn as string | undefined;
}

/** One statement of an IAM policy as SST rendered it. */
export interface PolicyStatement {
  Effect: string;
  Action: string[];
  Resource: string[];
  /** Operator → context key → values, as IAM writes it (the token callback's dynamodb:LeadingKeys). */
  Condition?: Record<string, Record<string, string[]>>;
}

/** A role's inline policies, statement by statement. */
export function inlineStatements(role: RecordedResource): PolicyStatement[] {
  const policies = (role.inputs.inlinePolicies as { policy: string }[] | undefined) ?? [];
  return policies.flatMap((p) => (JSON.parse(p.policy) as { Statement: PolicyStatement[] }).Statement);
}

/** One container of an ECS task definition, as far as the checks read it. */
export interface TaskContainer {
  environment?: { name: string; value: string }[];
  stopTimeout?: number;
}

/** A task's containers; SST passes the definitions as a secret, which the mocks echo wrapped. */
export function taskContainers(task: RecordedResource): TaskContainer[] {
  const raw = task.inputs.containerDefinitions as string | { value?: string } | undefined;
  const text = typeof raw === "string" ? raw : raw?.value;
  return text ? (JSON.parse(text) as TaskContainer[]) : [];
}
