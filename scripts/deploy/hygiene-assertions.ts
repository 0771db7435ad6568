import { REGION, type RecordedResource } from "./pulumi-mocks.ts";
import type { StageRun } from "./sst-program.ts";
import { StageResources, taskContainers } from "./stage-resources.ts";

/**
 * Configuration hygiene: a component's environments carry names and URLs only and its logs are JSON
 * kept a month; across the stage, the outputs the client reads point at one component, and no
 * Output is turned into a string.
 */

/**
 * What SST itself puts in a function's environment: the app's name and stage, the name of its
 * encrypted link file and, under `sst dev`, the bridge's endpoints. SST_KEY (the file's key) is not
 * here: it appears only when a function links a resource, which the IAM check refuses anyway.
 */
const SST_VARIABLES = new Set([
  "SST_RESOURCE_App",
  "SST_KEY_FILE",
  "SST_APP",
  "SST_STAGE",
  "SST_REGION",
  "SST_FUNCTION_ID",
  "SST_ASSET_BUCKET",
  "SST_APPSYNC_HTTP",
  "SST_APPSYNC_REALTIME",
]);
/** A name, number, path or URL: nothing that could hide a credential in a value. */
const PLAIN = /^[A-Za-z0-9._:/@=+-]*$/;
const SECRET_LIKE = /secret|password|token|AKIA/i;

function isNameOrUrl(value: string): boolean {
  if (PLAIN.test(value)) return true;
  // SKYFORGE_QUEUE_URLS and the like: a JSON object of names and URLs.
  try {
    const parsed = JSON.parse(value) as unknown;
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return false;
    return Object.values(parsed).every((v) => typeof v === "string" && PLAIN.test(v));
  } catch {
    return false;
  }
}

/** The pool container's environment (SST passes the container definitions as a wrapped secret). */
export function containerEnvironments(stage: StageResources): Record<string, string>[] {
  return stage
    .ofType("aws:ecs/taskDefinition:TaskDefinition")
    .flatMap((task) =>
      taskContainers(task).map((d) =>
        Object.fromEntries((d.environment ?? []).map((e) => [e.name, e.value])),
      ),
    );
}

/**
 * The names the stage itself chose, which a value may hold (realtime's topic prefix is
 * `skyforge/<app>/<stage>/<component>`, a bucket's name is lower-cased from them): a name is no
 * credential, so an app called token-service or a stage called secrets-test is looked at without
 * them. SST puts the app's name in SST_RESOURCE_App.
 */
function withoutOwnNames(value: string, env: Record<string, string>, stage: StageResources): string {
  let app: string | undefined;
  try {
    app = (JSON.parse(env.SST_RESOURCE_App ?? "{}") as { name?: string }).name;
  } catch {
    app = undefined;
  }
  const names = [app, env.SST_APP, stage.run.stage, ...stage.run.components.map((c) => c.name)];
  return names.reduce<string>(
    (v, name) => (name ? v.split(name.toLowerCase()).join("") : v),
    value.toLowerCase(),
  );
}

function environmentFailures(stage: StageResources): string[] {
  const envs: [string, Record<string, string>][] = [
    ...stage.functions.map((fn): [string, Record<string, string>] => [`function ${fn.name}`, stage.env(fn)]),
    ...containerEnvironments(stage).map((env): [string, Record<string, string>] => ["the pool task", env]),
  ];
  const failures: string[] = [];
  for (const [owner, env] of envs) {
    for (const [name, value] of Object.entries(env)) {
      if (!/^SKYFORGE_[A-Z_]+$/.test(name) && !SST_VARIABLES.has(name))
        failures.push(`${owner} has the variable ${name}`);
      const secretLike = SECRET_LIKE.test(withoutOwnNames(value, env, stage));
      if (secretLike || (name.startsWith("SKYFORGE_") && !isNameOrUrl(value))) {
        failures.push(`${owner}'s ${name} carries more than names and URLs: ${value}`);
      }
    }
  }
  return failures;
}

/** JSON logs (the Powertools logger writes JSON) kept one month, from functions and the pool alike. */
function loggingFailures(stage: StageResources): string[] {
  const failures: string[] = [];
  for (const fn of stage.functions) {
    const format = (fn.inputs.loggingConfig as { logFormat?: string } | undefined)?.logFormat;
    if (format !== "JSON") failures.push(`function ${fn.name} logs ${format}`);
  }
  for (const group of stage.ofType("aws:cloudwatch/logGroup:LogGroup")) {
    if (group.inputs.retentionInDays !== 30) {
      failures.push(`log group ${group.name} keeps ${group.inputs.retentionInDays ?? "forever"} days`);
    }
  }
  return failures;
}

/** The outputs a component gives (Skyforge `outputs`), which the client reads from .sst/outputs.json. */
const CLIENT_OUTPUTS = ["api", "apiFunction", "dashboard", "enqueueFunction", "region", "stage", "table"];

/**
 * When the program returns a component's `outputs` (this repository's sst.config.ts does; a
 * project may return its own), exactly those keys, pointing at that component's resources.
 */
function outputFailures(run: StageRun): string[] {
  const out = run.outputs;
  if (!CLIENT_OUTPUTS.some((k) => k in out)) return [];
  const keys = Object.keys(out)
    .filter((k) => !k.startsWith("_") && out[k] !== undefined)
    .sort();
  const byEnqueue = run.components.map((c) => new StageResources(run, c));
  const stage =
    byEnqueue.find((s) =>
      s.functions.some(
        (fn) => s.handlerOf(fn) === s.report.handlers.enqueue && fn.inputs.name === out.enqueueFunction,
      ),
    ) ?? byEnqueue[0];
  if (!stage) return ["the stack outputs a Skyforge component's outputs, but the program creates none"];
  const pooled = !run.dev && stage.ofType("aws:ecs/service:Service").length > 0;
  const expected = [...CLIENT_OUTPUTS, ...(pooled ? ["poolService"] : [])].sort();
  const failures: string[] = [];
  if (keys.join() !== expected.join())
    failures.push(`the stack outputs ${keys.join(", ")}; README.md documents ${expected.join(", ")}`);
  const { handlers } = stage.report;
  const enqueue = stage.functions.find((fn) => stage.handlerOf(fn) === handlers.enqueue);
  const apiFunction = stage.functions.find((fn) => stage.handlerOf(fn) === handlers.api);
  const points: [string, RecordedResource | undefined, unknown][] = [
    ["enqueueFunction", enqueue, enqueue?.inputs.name],
    ["apiFunction", apiFunction, apiFunction?.inputs.name],
    ["table", stage.table, stage.table?.inputs.name],
    [
      "api",
      stage.ofType("aws:apigatewayv2/api:Api")[0],
      stage.ofType("aws:apigatewayv2/api:Api")[0]?.outputs.apiEndpoint,
    ],
  ];
  if (pooled) {
    const service = stage.ofType("aws:ecs/service:Service")[0];
    points.push(["poolService", service, service?.inputs.name]);
  }
  for (const [key, resource, value] of points) {
    if (!resource || value === undefined || out[key] !== value)
      failures.push(`output ${key} is ${String(out[key])}, not ${String(value)}`);
  }
  // The client checks `stage` against the stage it was asked for, and signs for `region`.
  if (out.stage !== run.stage) failures.push(`output stage is ${String(out.stage)}, not ${run.stage}`);
  if (out.region !== REGION) failures.push(`output region is ${String(out.region)}, not ${REGION}`);
  return failures;
}

/** A stage named as production keeps its data: SST reports the stage's protection as `_protect`. */
function protectionFailures(run: StageRun): string[] {
  return ["prod", "production"].includes(run.stage) && run.outputs._protect !== true
    ? [`stage ${run.stage} is not protected`]
    : [];
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

/** A component's own functions, pool task and log groups. */
export function componentHygieneFailures(stage: StageResources): string[] {
  return [...environmentFailures(stage), ...loggingFailures(stage)];
}

/** Across the stage: the client's outputs, protection, and no Output leaked into a string. */
export function hygieneFailures(run: StageRun): string[] {
  return [...outputFailures(run), ...protectionFailures(run), ...leakFailures(run)];
}
