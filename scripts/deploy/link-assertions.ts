import { PRODUCER_ACTIONS, producerRoutePaths } from "../../lib/deploy-plan/producer-link.ts";
import type { RecordedResource } from "./pulumi-mocks.ts";
import type { StageRun } from "./sst-program.ts";
import { arnOf, inlineStatements, type PolicyStatement, StageResources } from "./stage-resources.ts";

/**
 * `link: [jobs]` on a project's own function (infra/skyforge.ts getSSTLink): its role may reach the
 * component's resources through exactly the producer's statements of lib/deploy-plan/producer-link.ts
 * (execute-api:Invoke on the enqueue routes, lambda:InvokeFunction on the enqueue function) and
 * nothing else of the component's, and no action with a `*`.
 */

/** A function outside every component whose role reaches a component's resources. */
export interface LinkedGrant {
  /** The function's logical name (the Lambda function resource's). */
  function: string;
  component: string;
  /** The role's statements that name one of the component's resources. */
  statements: PolicyStatement[];
  /** What the link should have given it. */
  expected: PolicyStatement[];
}

const canonical = (s: PolicyStatement) =>
  JSON.stringify({ Effect: s.Effect, Action: [...s.Action].sort(), Resource: [...s.Resource].sort() });

/** The ARNs a statement would name to reach a component: its resources', and its API's execution ARN. */
function componentArns(stage: StageResources): string[] {
  return stage.resources
    .flatMap((r) => [arnOf(r), r.outputs.executionArn])
    .filter((a): a is string => typeof a === "string" && a.startsWith("arn:"));
}

/** The producer's statements for one component, with its ARNs. */
function producerStatements(stage: StageResources): PolicyStatement[] {
  const api = stage.ofType("aws:apigatewayv2/api:Api")[0]?.outputs.executionArn;
  const enqueue = stage.functions.find((fn) => stage.handlerOf(fn) === stage.report.handlers.enqueue);
  return [
    {
      Effect: "Allow",
      Action: [PRODUCER_ACTIONS.api],
      Resource: producerRoutePaths().map((path) => `${String(api)}/${path}`),
    },
    { Effect: "Allow", Action: [PRODUCER_ACTIONS.enqueue], Resource: [String(arnOf(enqueue))] },
  ];
}

/** Every function outside the components whose role reaches a component, with what it holds there. */
export function linkedGrants(run: StageRun): LinkedGrant[] {
  const whole = new StageResources(run);
  const outside = whole.functions.filter((fn) => fn.component === undefined);
  const grants: LinkedGrant[] = [];
  for (const report of run.components) {
    const stage = new StageResources(run, report);
    const arns = componentArns(stage);
    const reaches = (s: PolicyStatement) => s.Resource.some((r) => arns.some((arn) => r.startsWith(arn)));
    for (const fn of outside) {
      const role: RecordedResource | undefined = whole.roleByArn(fn.inputs.role);
      const statements = role ? inlineStatements(role).filter(reaches) : [];
      if (statements.length === 0) continue;
      grants.push({
        function: fn.name,
        component: report.name,
        statements,
        expected: producerStatements(stage),
      });
    }
  }
  return grants;
}

export function linkFailures(run: StageRun): string[] {
  return linkedGrants(run).flatMap((g) => {
    const label = `function ${g.function} (linked to ${g.component})`;
    const want = new Set(g.expected.map(canonical));
    const have = new Set(g.statements.map(canonical));
    return [
      ...[...have].filter((s) => !want.has(s)).map((s) => `${label}: extra statement ${s}`),
      ...[...want].filter((s) => !have.has(s)).map((s) => `${label}: missing statement ${s}`),
      ...g.statements
        .flatMap((s) => s.Action)
        .filter((a) => a.includes("*"))
        .map((a) => `${label}: a wildcard action ${a}`),
    ];
  });
}
