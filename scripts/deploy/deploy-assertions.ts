import { APP_FREE_FUNCTIONS, type LambdaFunction, lambdaFunctions } from "../../infra/entries.ts";
import { lambdaArchitecture, lambdaRuntime, nodejsBuild } from "../../infra/function-defaults.ts";
import { API_ROUTE_KEYS, UNAUTHENTICATED_ROUTE_KEYS } from "../../lib/api/route-keys.ts";
import {
  LAMBDA_INIT_SECONDS,
  tierOf,
  visibilityTimeoutSeconds,
} from "../../lib/declarations/queue-declaration.ts";
import { QUEUE_MESSAGE_RETENTION_SECONDS } from "../../lib/limits.ts";
import { statusIndex, ttlAttribute } from "../../lib/store/table.ts";
import { BUNDLE_BUDGET_BYTES } from "../bundle-sizes.ts";
import { claimsBucketFailures } from "./claims-assertions.ts";
import { exposureFailures } from "./exposure-assertions.ts";
import { componentHygieneFailures, hygieneFailures } from "./hygiene-assertions.ts";
import { iamFailures } from "./iam-assertions.ts";
import { linkFailures } from "./link-assertions.ts";
import { monitoringFailures } from "./monitoring-assertions.ts";
import { poolFailures } from "./pool-assertions.ts";
import { iotPublishFailures, realtimeFailures } from "./realtime-assertions.ts";
import type { StageRun } from "./sst-program.ts";
import { arnOf, StageResources } from "./stage-resources.ts";
import { throttleFailures } from "./throttle-assertions.ts";

/**
 * What SST really produced for one stage, checked against each Skyforge component's own app
 * declarations (what it reported it was built from: infra/component-report.ts). Each check returns
 * readable failures; an empty list means the stage is as declared.
 */

const sameSet = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && [...a].sort().every((x, i) => x === [...b].sort()[i]);

function functionFailures(stage: StageResources): string[] {
  const failures: string[] = [];
  const { queues, handlers: entries } = stage.report;
  const handlers = stage.functions.map((fn) => stage.handlerOf(fn) ?? `${fn.name} (unknown handler)`);
  // One function per entry point, but one worker per Lambda-tier queue.
  const workers = queues.filter((q) => tierOf(q) === "lambda").length;
  const expected = lambdaFunctions.flatMap((fn) =>
    fn === "worker" ? Array<string>(workers).fill(entries.worker) : [entries[fn]],
  );
  if (!sameSet(handlers, expected)) {
    failures.push(`functions are ${handlers.join(", ")}; expected ${expected.join(", ")}`);
  }
  if (stage.run.dev) {
    // `sst dev` swaps each function for its bridge; what it was declared with is its dev target.
    for (const t of stage.run.devTargets.filter((d) => handlers.includes(d.handler))) {
      if (t.runtime !== lambdaRuntime || t.architecture !== lambdaArchitecture) {
        failures.push(`function ${t.functionID} is ${t.runtime} on ${t.architecture}`);
      }
    }
    return failures;
  }
  for (const fn of stage.functions) {
    const archs = fn.inputs.architectures as string[] | undefined;
    if (fn.inputs.runtime !== lambdaRuntime || archs?.join() !== lambdaArchitecture) {
      failures.push(`function ${fn.name} is ${fn.inputs.runtime} on ${archs?.join()}`);
    }
    if (fn.inputs.handler !== stage.handlerOf(fn)) {
      failures.push(`function ${fn.name} runs ${fn.inputs.handler}, built from ${stage.handlerOf(fn)}`);
    }
    // The SDK is the runtime's: the runtime may only move when skyforge deploys the function.
    const pinned = stage
      .ofType("aws:lambda/runtimeManagementConfig:RuntimeManagementConfig")
      .some((c) => c.inputs.functionName === fn.inputs.name && c.inputs.updateRuntimeOn === "FunctionUpdate");
    if (!pinned) failures.push(`function ${fn.name} takes runtime updates outside a deploy`);
  }
  for (const b of stage.run.builds.filter((built) => handlers.includes(built.handler))) {
    if (JSON.stringify(b.properties) !== JSON.stringify(nodejsBuild)) {
      failures.push(`${b.handler} was built with ${JSON.stringify(b.properties)}`);
    }
    // Each function runs the component's own app: its bundle holds that module (and its kinds);
    // the functions whose factory uses no app (infra/entries.ts) hold none of it.
    const fn = b.handler.slice(b.handler.lastIndexOf("/") + 1, b.handler.lastIndexOf(".")) as LambdaFunction;
    const holdsApp = b.inputs.includes(stage.report.app);
    if (APP_FREE_FUNCTIONS.has(fn) ? holdsApp : !holdsApp)
      failures.push(
        `${b.handler}'s bundle ${holdsApp ? "holds" : "does not hold"} the app module ${stage.report.app}`,
      );
    if (b.bytes > BUNDLE_BUDGET_BYTES)
      failures.push(`${b.handler}'s bundle is ${b.bytes} bytes, over the ${BUNDLE_BUDGET_BYTES} budget`);
  }
  return failures;
}

/** Per Lambda-tier queue: the worker's event source, and a visibility that covers its retries. */
function eventSourceAndQueueFailures(stage: StageResources): string[] {
  const failures: string[] = [];
  const mappings = stage.ofType("aws:lambda/eventSourceMapping:EventSourceMapping");
  for (const q of stage.report.queues) {
    const queue = stage.queue(q.name);
    const dlq = stage.queue(q.name, true);
    if (!queue || !dlq) {
      failures.push(`queue ${q.name} or its DLQ is missing`);
      continue;
    }
    for (const [label, r] of [
      ["", queue],
      [" DLQ", dlq],
    ] as const) {
      if (r.inputs.messageRetentionSeconds !== QUEUE_MESSAGE_RETENTION_SECONDS) {
        failures.push(`queue ${q.name}${label} keeps messages ${r.inputs.messageRetentionSeconds} s`);
      }
      if (r.inputs.sqsManagedSseEnabled !== true) failures.push(`queue ${q.name}${label} is not encrypted`);
    }
    const redrive = JSON.parse(String(queue.inputs.redrivePolicy ?? "{}")) as {
      deadLetterTargetArn?: string;
      maxReceiveCount?: number;
    };
    if (redrive.deadLetterTargetArn !== arnOf(dlq) || redrive.maxReceiveCount !== q.maxReceiveCount) {
      failures.push(`queue ${q.name} redrives ${JSON.stringify(redrive)}`);
    }
    // The pool reads its messages with this visibility too, and lib/declarations/ sizes it from the declaration.
    if (queue.inputs.visibilityTimeoutSeconds !== visibilityTimeoutSeconds(q)) {
      failures.push(
        `queue ${q.name}: visibility ${queue.inputs.visibilityTimeoutSeconds} s, declared ${visibilityTimeoutSeconds(q)} s`,
      );
    }
    const mapping = mappings.find((m) => m.inputs.eventSourceArn === arnOf(queue));
    if (tierOf(q) !== "lambda") {
      if (mapping) failures.push(`pool queue ${q.name} has a Lambda event source`);
      continue;
    }
    if (!mapping) {
      failures.push(`queue ${q.name} has no event source mapping`);
      continue;
    }
    const m = mapping.inputs as {
      functionResponseTypes?: string[];
      batchSize?: number;
      maximumBatchingWindowInSeconds?: number;
      scalingConfig?: { maximumConcurrency?: number };
      functionName?: string;
    };
    if (!m.functionResponseTypes?.includes("ReportBatchItemFailures")) {
      failures.push(`queue ${q.name}: the event source lacks ReportBatchItemFailures`);
    }
    if (m.batchSize !== q.batchSize || m.maximumBatchingWindowInSeconds !== q.batchWindowSeconds) {
      failures.push(
        `queue ${q.name}: batch ${m.batchSize} / window ${m.maximumBatchingWindowInSeconds} s, declared ${q.batchSize} / ${q.batchWindowSeconds} s`,
      );
    }
    if (m.scalingConfig?.maximumConcurrency !== q.maxConcurrency) {
      failures.push(`queue ${q.name}: maximum concurrency ${m.scalingConfig?.maximumConcurrency}`);
    }
    const worker = stage.functionByArn(m.functionName);
    if (!worker || stage.env(worker).SKYFORGE_WORKER_QUEUE !== q.name) {
      failures.push(`queue ${q.name}: the event source feeds ${worker?.name ?? "no function"}`);
      continue;
    }
    const timeout = Number(worker.inputs.timeout);
    if (timeout !== q.workerTimeoutSeconds) {
      failures.push(
        `queue ${q.name}: the worker times out after ${timeout} s, declared ${q.workerTimeoutSeconds} s`,
      );
    }
    // Lambda refuses a mapping whose function outlives the visibility; the window and the init come first.
    const visibility = Number(queue.inputs.visibilityTimeoutSeconds);
    const needed = timeout + Math.ceil(q.batchWindowSeconds) + LAMBDA_INIT_SECONDS;
    if (!(visibility >= needed)) {
      failures.push(
        `queue ${q.name}: visibility ${visibility} s is under the worker's ${timeout} s timeout + its ${q.batchWindowSeconds} s batching window + ${LAMBDA_INIT_SECONDS} s of init`,
      );
    }
  }
  return failures;
}

function apiAndScheduleFailures(stage: StageResources): string[] {
  const failures: string[] = [];
  const routes = stage.ofType("aws:apigatewayv2/route:Route");
  const keys = routes.map((r) => String(r.inputs.routeKey));
  // Exactly the API's route keys and no `$default`: a path no key names gets API Gateway's own 404,
  // so no path variant reaches the function past a route-level IAM Deny.
  if (!sameSet(keys, [...API_ROUTE_KEYS])) failures.push(`routes are ${keys.join(", ")}`);
  const integrations = stage.ofType("aws:apigatewayv2/integration:Integration");
  for (const r of routes) {
    const key = String(r.inputs.routeKey);
    // The token callback is the one route without IAM auth (its url's secret is the credential),
    // served by its own function under the narrowest role (checked with the roles); the API
    // function answers every other route, each IAM-authorized.
    const open = UNAUTHENTICATED_ROUTE_KEYS.includes(key);
    const auth = r.inputs.authorizationType;
    if (open ? auth !== "NONE" : auth !== "AWS_IAM")
      failures.push(`route ${key} is ${auth}, not ${open ? "NONE" : "AWS_IAM"}`);
    const integration = integrations.find((i) => r.inputs.target === `integrations/${i.outputs.id}`);
    const fn = stage.functionByArn(integration?.inputs.integrationUri);
    const handler = open ? stage.report.handlers["token-callback"] : stage.report.handlers.api;
    if (!fn || stage.handlerOf(fn) !== handler) {
      failures.push(`route ${key} is served by ${fn?.name ?? "no function"}, not ${handler}`);
    }
  }
  const { handlers } = stage.report;
  const expected: Record<string, string> = {
    [handlers.reaper]: "rate(1 minute)",
    [handlers.cleanup]: "rate(1 minute)",
    [handlers.cron]: "rate(1 minute)",
  };
  const schedules = stage.ofType("aws:scheduler/schedule:Schedule");
  for (const [handler, expression] of Object.entries(expected)) {
    const found = schedules.find((s) => {
      const fn = stage.functionByArn((s.inputs.target as { arn: string }).arn);
      return fn && stage.handlerOf(fn) === handler;
    });
    if (found?.inputs.scheduleExpression !== expression) {
      failures.push(`${handler} is scheduled ${found?.inputs.scheduleExpression ?? "never"}`);
    }
  }
  return failures;
}

/** The jobs table: on demand, recoverable, expiring, and undeletable where the stage is protected. */
function tableFailures(stage: StageResources, protectedStage: boolean): string[] {
  const t = stage.table?.inputs as
    | {
        billingMode?: string;
        pointInTimeRecovery?: { enabled?: boolean };
        ttl?: { attributeName?: string; enabled?: boolean };
        deletionProtectionEnabled?: boolean;
        globalSecondaryIndexes?: { name: string }[];
      }
    | undefined;
  if (!t) return ["no jobs table"];
  const failures: string[] = [];
  if (t.billingMode !== "PAY_PER_REQUEST") failures.push(`the table bills ${t.billingMode}`);
  if (t.pointInTimeRecovery?.enabled !== true) failures.push("the table has no point-in-time recovery");
  if (t.ttl?.enabled !== true || t.ttl.attributeName !== ttlAttribute)
    failures.push("the table's TTL is off");
  if (!t.globalSecondaryIndexes?.some((i) => i.name === statusIndex.name))
    failures.push("the status index is missing");
  if (t.deletionProtectionEnabled !== protectedStage) {
    failures.push(
      `the table's deletion protection is ${t.deletionProtectionEnabled} on a ${protectedStage ? "protected" : "disposable"} stage`,
    );
  }
  return failures;
}

/** One component's resources against its app's declarations; each failure names the component. */
function componentFailures(stage: StageResources): string[] {
  return [
    ...functionFailures(stage),
    ...eventSourceAndQueueFailures(stage),
    ...iamFailures(stage),
    ...apiAndScheduleFailures(stage),
    ...throttleFailures(stage),
    ...tableFailures(stage, stage.run.outputs._protect === true),
    ...claimsBucketFailures(stage),
    ...exposureFailures(stage),
    ...poolFailures(stage),
    ...monitoringFailures(stage),
    ...realtimeFailures(stage),
    ...componentHygieneFailures(stage),
  ].map((failure) => `${stage.prefix}: ${failure}`);
}

export function stageFailures(run: StageRun): string[] {
  if (run.components.length === 0) return ["the program creates no Skyforge component"];
  return [
    ...run.components.flatMap((c) => componentFailures(new StageResources(run, c))),
    ...linkFailures(run),
    ...iotPublishFailures(run),
    ...hygieneFailures(run),
  ];
}
