import { app } from "../../app/index.ts";
import { pascalCase } from "../../lib/deploy-plan/resource-names.ts";
import { REPO_COMPONENT } from "../../scripts/deploy/lambda-build.ts";
import { ensurePlatform, runStage } from "../../scripts/deploy/sst-program.ts";
import { arnOf, inlineStatements, StageResources } from "../../scripts/deploy/stage-resources.ts";
import type { Permission } from "./iam-coverage.ts";
import { projectRoot } from "./project-copy.ts";

/** One Lambda function as SST really declares it, with references in place of the stage's names. */
export interface DeclaredFunction {
  /** The handler string SST builds and Lambda loads: ".sst/skyforge/Jobs/worker.handler". */
  handler: string;
  runtime: string;
  timeoutSeconds: number;
  memoryMb: number;
  /** Values may hold references such as "Dynamo:Jobs.name" (see resolveReferences). */
  environment: Record<string, string>;
  /** The function role's inline policy, statement by statement. */
  permissions: Permission[];
}

/** The concrete name, URL or ARN of each resource in one SST run, by the reference it stands for. */
function stageReferences(stage: StageResources): Map<string, string> {
  const refs = new Map<string, string>();
  const set = (ref: string, value: unknown) => {
    if (typeof value === "string") refs.set(ref, value);
  };
  set("Dynamo:Jobs.name", stage.table?.inputs.name);
  set("Dynamo:Jobs.arn", arnOf(stage.table));
  const claims = stage.ofType("aws:s3/bucket:Bucket").find((b) => b.name.startsWith(`${stage.prefix}Claims`));
  set("Bucket:Claims.name", claims?.outputs.bucket);
  set("Bucket:Claims.arn", arnOf(claims));
  const mappings = stage.ofType("aws:lambda/eventSourceMapping:EventSourceMapping");
  for (const q of app.queues) {
    const id = pascalCase(q.name);
    for (const [suffix, queue] of [
      ["Queue", stage.queue(q.name)],
      ["Dlq", stage.queue(q.name, true)],
    ] as const) {
      set(`Queue:${id}${suffix}.url`, queue?.outputs.url);
      set(`Queue:${id}${suffix}.arn`, arnOf(queue));
    }
    const mapping = mappings.find((m) => m.inputs.eventSourceArn === arnOf(stage.queue(q.name)));
    const ref = `Queue:${id}Queue.subscriber.nodes.eventSourceMapping`;
    set(`${ref}.uuid`, mapping?.outputs.uuid);
    set(`${ref}.arn`, arnOf(mapping));
  }
  return refs;
}

/**
 * Every Lambda function SST's own components declare for a normal stage (scripts/deploy: the real
 * platform code under Pulumi's mocks), with its environment and its role's policy as SST rendered
 * them. The stage's names, URLs and ARNs are turned back into references, so a test can point them
 * at its own emulators (referenceValues, resolveReferences).
 */
export async function declaredFunctions(): Promise<DeclaredFunction[]> {
  ensurePlatform(projectRoot);
  const run = await runStage(projectRoot, "ci", false);
  // The repository's own component: its functions, over app/.
  const stage = new StageResources(
    run,
    run.components.find((c) => c.name === REPO_COMPONENT),
  );
  // Longest first: an ARN or URL contains the resource's name.
  const refs = [...stageReferences(stage)].sort(([, a], [, b]) => b.length - a.length);
  const toReferences = (value: string) =>
    refs.reduce((v, [ref, concrete]) => v.replaceAll(concrete, ref), value);
  return stage.functions.map((fn) => {
    const role = stage.roleByArn(fn.inputs.role);
    const statements = role ? inlineStatements(role) : [];
    return {
      handler: String(fn.inputs.handler),
      runtime: String(fn.inputs.runtime),
      timeoutSeconds: Number(fn.inputs.timeout),
      memoryMb: Number(fn.inputs.memorySize),
      environment: Object.fromEntries(Object.entries(stage.env(fn)).map(([k, v]) => [k, toReferences(v)])),
      permissions: statements.map((s) => ({
        actions: s.Action,
        resources: s.Resource.map(toReferences),
        ...(s.Condition ? { conditions: s.Condition } : {}),
      })),
    };
  });
}

/** The deployed resources a declared reference stands for. */
export interface DeployedResources {
  table: { name: string; arn: string };
  claims: { name: string; arn: string };
  /** By declared queue name. */
  queues: ReadonlyMap<string, { url: string; arn: string; dlqUrl: string; dlqArn: string }>;
  /** By declared queue name, Lambda-tier queues only. */
  eventSourceMappings: ReadonlyMap<string, { uuid: string; arn: string }>;
}

/** Each reference ("Queue:DefaultQueue.url") and its value in the test's own deployment. */
export function referenceValues(deployed: DeployedResources): Map<string, string> {
  const refs = new Map([
    ["Dynamo:Jobs.name", deployed.table.name],
    ["Dynamo:Jobs.arn", deployed.table.arn],
    ["Bucket:Claims.name", deployed.claims.name],
    ["Bucket:Claims.arn", deployed.claims.arn],
  ]);
  for (const [name, q] of deployed.queues) {
    const id = pascalCase(name);
    refs.set(`Queue:${id}Queue.url`, q.url);
    refs.set(`Queue:${id}Queue.arn`, q.arn);
    refs.set(`Queue:${id}Dlq.url`, q.dlqUrl);
    refs.set(`Queue:${id}Dlq.arn`, q.dlqArn);
  }
  for (const [name, m] of deployed.eventSourceMappings) {
    const mapping = `Queue:${pascalCase(name)}Queue.subscriber.nodes.eventSourceMapping`;
    refs.set(`${mapping}.uuid`, m.uuid);
    refs.set(`${mapping}.arn`, m.arn);
  }
  return refs;
}

/** A declared value with every reference replaced; a reference nothing deployed stands for throws. */
export function resolveReferences(value: string, refs: ReadonlyMap<string, string>): string {
  return value.replace(/\b[A-Z][A-Za-z0-9]*:[A-Za-z0-9]+(?:\.[A-Za-z][A-Za-z0-9]*)+/g, (ref) => {
    const resolved = refs.get(ref);
    if (resolved === undefined) throw new Error(`nothing deployed in this test stands for ${ref}`);
    return resolved;
  });
}
