import { app } from "../../app/index.ts";
import { lambdaArchitecture, lambdaRuntime, nodejsBuild } from "../../infra/function-defaults.ts";
import { API_CATCH_ALL_ROUTE_KEY, API_ROUTE_KEYS } from "../../lib/api/route-keys.ts";
import { tierOf } from "../../lib/app/queue-declaration.ts";
import { buildAlarms } from "../../lib/infra/alarms.ts";
import { QUEUE_MESSAGE_RETENTION_SECONDS } from "../../lib/limits.ts";
import { statusIndex, ttlAttribute } from "../../lib/store/table.ts";
import { iamFailures } from "./iam-assertions.ts";
import { lambdaHandlers } from "./lambda-build.ts";
import type { StageRun } from "./sst-program.ts";
import { arnOf, StageResources } from "./stage-resources.ts";

/**
 * What SST really produced for one stage, checked against the app's declarations. Each check
 * returns readable failures; an empty list means the stage is as declared.
 */

const sameSet = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && [...a].sort().every((x, i) => x === [...b].sort()[i]);

function functionFailures(stage: StageResources): string[] {
  const failures: string[] = [];
  const handlers = stage.functions.map((fn) => stage.handlerOf(fn) ?? `${fn.name} (unknown handler)`);
  if (!sameSet(handlers, lambdaHandlers)) {
    failures.push(`functions are ${handlers.join(", ")}; expected ${lambdaHandlers.join(", ")}`);
  }
  if (stage.run.dev) {
    // `sst dev` swaps each function for its bridge; what it was declared with is its dev target.
    for (const t of stage.run.devTargets) {
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
  }
  for (const b of stage.run.builds) {
    if (JSON.stringify(b.properties) !== JSON.stringify(nodejsBuild)) {
      failures.push(`${b.handler} was built with ${JSON.stringify(b.properties)}`);
    }
  }
  return failures;
}

/** Per Lambda-tier queue: the worker's event source, and a visibility that covers its retries. */
function eventSourceAndQueueFailures(stage: StageResources): string[] {
  const failures: string[] = [];
  const mappings = stage.ofType("aws:lambda/eventSourceMapping:EventSourceMapping");
  for (const q of app.queues) {
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
    if (tierOf(q) !== "lambda") continue;
    const mapping = mappings.find((m) => m.inputs.eventSourceArn === arnOf(queue));
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
    const visibility = Number(queue.inputs.visibilityTimeoutSeconds);
    if (!(visibility >= 6 * timeout)) {
      failures.push(
        `queue ${q.name}: visibility ${visibility} s is under 6 × the worker's ${timeout} s timeout`,
      );
    }
  }
  return failures;
}

function apiAndScheduleFailures(stage: StageResources): string[] {
  const failures: string[] = [];
  const routes = stage.ofType("aws:apigatewayv2/route:Route");
  const keys = routes.map((r) => String(r.inputs.routeKey));
  if (!sameSet(keys, [...API_ROUTE_KEYS, API_CATCH_ALL_ROUTE_KEY]))
    failures.push(`routes are ${keys.join(", ")}`);
  for (const r of routes) {
    if (r.inputs.authorizationType !== "AWS_IAM") failures.push(`route ${r.inputs.routeKey} is not AWS_IAM`);
  }
  const expected: Record<string, string> = {
    "functions/reaper.handler": "rate(1 minute)",
    "functions/cleanup.handler": "rate(1 minute)",
    "functions/cron.handler": "rate(1 minute)",
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

function ecsFailures(stage: StageResources): string[] {
  const task = stage.ofType("aws:ecs/taskDefinition:TaskDefinition")[0];
  if (stage.run.dev) return task ? ["sst dev deploys the pool service; it should run locally"] : [];
  if (!task) return ["no pool task definition"];
  const platform = task.inputs.runtimePlatform as { cpuArchitecture?: string } | undefined;
  const failures: string[] = [];
  if (platform?.cpuArchitecture !== "ARM64") failures.push(`the pool task is ${platform?.cpuArchitecture}`);
  if (!task.inputs.taskRoleArn || task.inputs.taskRoleArn === task.inputs.executionRoleArn) {
    failures.push("the pool task and execution roles must be separate");
  }
  return failures;
}

interface Widget {
  type: string;
  x: number;
  y: number;
  width: number;
  height: number;
  properties: { markdown?: string; metrics?: unknown[][]; region?: string };
}

/** The alarms the app's queues call for, and a dashboard body CloudWatch would accept. */
function monitoringFailures(stage: StageResources): string[] {
  const failures: string[] = [];
  const names = stage.ofType("aws:cloudwatch/metricAlarm:MetricAlarm").map((a) => a.name);
  const spec = buildAlarms(
    app.queues.map((q) => ({ name: q.name, tier: tierOf(q), sqsName: "", dlqSqsName: "" })),
  );
  for (const { id } of spec) if (!names.includes(id)) failures.push(`alarm ${id} is missing`);
  const dashboard = stage.ofType("aws:cloudwatch/dashboard:Dashboard")[0];
  if (!dashboard) return [...failures, "no dashboard"];
  const body = JSON.parse(String(dashboard.inputs.dashboardBody)) as { widgets?: Widget[] };
  if (!Array.isArray(body.widgets) || body.widgets.length === 0)
    return [...failures, "the dashboard has no widgets"];
  for (const [i, w] of body.widgets.entries()) {
    const where = `dashboard widget ${i} (${w.type})`;
    if (![w.x, w.y, w.width, w.height].every(Number.isInteger) || w.x < 0 || w.x + w.width > 24) {
      failures.push(`${where} lies outside the 24-column grid`);
    }
    if (w.type === "text" && typeof w.properties.markdown !== "string")
      failures.push(`${where} has no markdown`);
    if (w.type === "metric") {
      if (!w.properties.region) failures.push(`${where} has no region`);
      const rows = w.properties.metrics ?? [];
      if (rows.length === 0) failures.push(`${where} has no metrics`);
      for (const row of rows) {
        const parts = Array.isArray(row) ? row.filter((x) => typeof x !== "object" || x === null) : [row];
        if (!parts.every((x) => typeof x === "string" && x.length > 0)) {
          failures.push(`${where} has a metric row with an empty or non-string part: ${JSON.stringify(row)}`);
        }
      }
    }
  }
  return failures;
}

/** An Output turned into a string by mistake shows up as one of these inside an input. */
function leakFailures(run: StageRun): string[] {
  const leaks = [/Calling \[toString\] on an \[Output<T>\]/, /\[object Object\]/];
  const failures = run.resources.flatMap((r) => {
    const text = JSON.stringify(r.inputs);
    return leaks.filter((p) => p.test(text)).map((p) => `${r.type} ${r.name}: an input contains ${p.source}`);
  });
  if (leaks.some((p) => p.test(run.log))) failures.push("the program printed an Output leak warning");
  return failures;
}

export function stageFailures(run: StageRun): string[] {
  const stage = new StageResources(run);
  return [
    ...functionFailures(stage),
    ...eventSourceAndQueueFailures(stage),
    ...iamFailures(stage),
    ...apiAndScheduleFailures(stage),
    ...tableFailures(stage, run.outputs._protect === true),
    ...ecsFailures(stage),
    ...monitoringFailures(stage),
    ...leakFailures(run),
  ];
}
