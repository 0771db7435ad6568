import {
  PUBLISHED_TOPICS,
  type PublishedTopics,
  realtimeReplayRuleSql,
  realtimeSecretParameter,
  topicsArn,
} from "../../lib/deploy-plan/realtime-plan.ts";
import { jobTopic, replayTopic, replyTopic } from "../../lib/job/realtime-wire.ts";
import type { IotAuthorizerResponse } from "../../lib/realtime/iot-authorizer.ts";
import { PROBED_JOBS } from "./authorizer-probe.ts";
import { containerEnvironments } from "./hygiene-assertions.ts";
import { ACCOUNT, IOT_ENDPOINT, REGION, type RecordedResource } from "./pulumi-mocks.ts";
import type { StageRun } from "./sst-program.ts";
import { arnOf, inlineStatements, type StageResources } from "./stage-resources.ts";

/**
 * Realtime on IoT Core (docs/architecture.md §25), as SST rendered it: the token secret is a
 * SecureString; IoT's custom authorizer runs the component's authorizer function, and what that
 * function grants a token is its own job's topics and nothing else; IoT may invoke the authorizer
 * and the replay function only from that authorizer and that rule; and across the stage, only
 * skyforge's roles may publish to a component's topics, none with `iot:*` or on `*`.
 */

/** The component's token secret parameter. */
export function realtimeSecretArn(stage: StageResources): string | undefined {
  return arnOf(stage.named("aws:ssm/parameter:Parameter", `${stage.prefix}RealtimeHmac`));
}

/** One of the component's topic trees, as an IAM resource. */
export function realtimeTopicsArn(stage: StageResources, topics: PublishedTopics): string {
  return topicsArn(
    { partition: "aws", region: REGION, account: ACCOUNT },
    stage.report.realtimePrefix,
    topics,
  );
}

function functionOf(stage: StageResources, handler: string): RecordedResource | undefined {
  return stage.functions.find((fn) => stage.handlerOf(fn) === handler);
}

export function realtimeFailures(stage: StageResources): string[] {
  const failures: string[] = [];
  const { realtimePrefix: prefix, handlers } = stage.report;
  if (!prefix.startsWith("skyforge/") || !prefix.endsWith(`/${stage.run.stage}/${stage.prefix}`))
    failures.push(`realtime's prefix ${prefix} is not skyforge/<app>/${stage.run.stage}/${stage.prefix}`);
  const secret = stage.named("aws:ssm/parameter:Parameter", `${stage.prefix}RealtimeHmac`);
  if (secret?.inputs.type !== "SecureString" || secret.inputs.name !== realtimeSecretParameter(prefix))
    failures.push(`realtime's secret is not the SecureString ${realtimeSecretParameter(prefix)}`);

  const authorizerFn = functionOf(stage, handlers["realtime-authorizer"]);
  const replayFn = functionOf(stage, handlers["realtime-replay"]);
  const authorizers = stage.ofType("aws:iot/authorizer:Authorizer");
  const rules = stage.ofType("aws:iot/topicRule:TopicRule");
  const authorizer = authorizers[0];
  const rule = rules[0];
  if (!authorizerFn || !replayFn) return [...failures, "realtime's authorizer or replay function is missing"];
  if (authorizers.length !== 1 || !authorizer)
    return [...failures, "the component has no one IoT authorizer"];
  if (rules.length !== 1 || !rule) return [...failures, "the component has no one IoT topic rule"];

  if (authorizer.inputs.authorizerFunctionArn !== arnOf(authorizerFn))
    failures.push(
      `IoT authorizer ${authorizer.name} runs ${authorizer.inputs.authorizerFunctionArn}, not ${authorizerFn.name}`,
    );
  if (authorizer.inputs.signingDisabled !== true || authorizer.inputs.status !== "ACTIVE")
    failures.push(
      `IoT authorizer ${authorizer.name} must be ACTIVE with signing disabled (the token is its own proof)`,
    );
  const sql = rule.inputs.sql;
  const targets = (rule.inputs.lambdas as { functionArn?: string }[] | undefined) ?? [];
  if (
    sql !== realtimeReplayRuleSql(prefix) ||
    targets.length !== 1 ||
    targets[0]?.functionArn !== arnOf(replayFn)
  )
    failures.push(`IoT rule ${rule.name} must send ${prefix}/replay/# to ${replayFn.name} alone`);

  // IoT may invoke each function from its own authorizer or rule only.
  const iotInvokes = stage
    .ofType("aws:lambda/permission:Permission")
    .filter((p) => p.inputs.principal === "iot.amazonaws.com")
    .map((p) => `${p.inputs.function} from ${p.inputs.sourceArn}`)
    .sort();
  const expected = [
    `${authorizerFn.inputs.name} from ${arnOf(authorizer)}`,
    `${replayFn.inputs.name} from ${arnOf(rule)}`,
  ].sort();
  if (JSON.stringify(iotInvokes) !== JSON.stringify(expected))
    failures.push(`IoT may invoke ${iotInvokes.join("; ") || "nothing"}; expected ${expected.join("; ")}`);

  if (!stage.run.dev) failures.push(...settingsFailures(stage, prefix, String(authorizer.inputs.name)));
  failures.push(...authorizerGrantFailures(stage, prefix));
  return failures;
}

/** The roles that publish (lib/deploy-plan/grants.ts), and the authorizer, which checks tokens. */
const PUBLISHERS = new Set(["worker", "api", "enqueue", "reaper", "cron", "realtime-replay"]);

/**
 * Each function's realtime settings (functions/realtime-config.ts): the publishers have the stack's
 * prefix and the data endpoint (without them a deployed stack publishes nothing), the API also the
 * authorizer's name and the secret's parameter, the authorizer the prefix and the parameter; a
 * function with no grant to publish has none. The pool task publishes as the worker does.
 */
function settingsFailures(stage: StageResources, prefix: string, authorizer: string): string[] {
  const failures: string[] = [];
  const { handlers } = stage.report;
  const check = (owner: string, env: Record<string, string>, want: Record<string, string>) => {
    const have = Object.fromEntries(Object.entries(env).filter(([k]) => k.startsWith("SKYFORGE_REALTIME_")));
    const sorted = (o: Record<string, string>) => JSON.stringify(Object.entries(o).sort());
    if (sorted(have) !== sorted(want))
      failures.push(
        `${owner}'s realtime settings are ${JSON.stringify(have)}; expected ${JSON.stringify(want)}`,
      );
  };
  const publish = { SKYFORGE_REALTIME_PREFIX: prefix, SKYFORGE_REALTIME_ENDPOINT: IOT_ENDPOINT };
  const secret = { SKYFORGE_REALTIME_HMAC_PARAMETER: realtimeSecretParameter(prefix) };
  for (const fn of stage.functions) {
    const handler = stage.handlerOf(fn);
    const role = Object.entries(handlers).find(([, h]) => h === handler)?.[0] ?? "";
    const want =
      role === "api"
        ? { ...publish, ...secret, SKYFORGE_REALTIME_AUTHORIZER: authorizer }
        : role === "realtime-authorizer"
          ? { ...publish, ...secret }
          : PUBLISHERS.has(role)
            ? publish
            : {};
    check(`function ${fn.name}`, stage.env(fn), want);
  }
  for (const env of containerEnvironments(stage)) check("the pool task", env, publish);
  return failures;
}

/**
 * The authorizer's answers, its bundle asked with tokens of two jobs and three bad ones
 * (authorizer-probe.ts): each good token reaches its own job's topics, its own replies and its own
 * replay requests, exactly; a token signed with another secret, an expired one and one for another
 * stack get no policy. The secret was read once, with decryption, from the component's parameter.
 */
function authorizerGrantFailures(stage: StageResources, prefix: string): string[] {
  const probed = stage.run.authorizers[stage.prefix];
  if (!probed) return ["the realtime authorizer was not asked"];
  if ("error" in probed) return [probed.error];
  const [, partition, , region, account] = probed.functionArn.split(":");
  const iot = `arn:${partition}:iot:${region}:${account}`;
  const failures: string[] = [];
  for (const { label, answer, error } of probed.answers) {
    const response = answer as IotAuthorizerResponse | undefined;
    if (!response) {
      failures.push(`the realtime authorizer failed on ${label}: ${error}`);
      continue;
    }
    const job = PROBED_JOBS.find((j) => j === label);
    if (!job) {
      if (response.isAuthenticated || response.policyDocuments.length > 0)
        failures.push(`the realtime authorizer lets ${label} connect`);
      continue;
    }
    const clientId = `sf-${job}`;
    const granted = response.policyDocuments.flatMap((d) =>
      d.Statement.map((s) => `${s.Action} ${[...s.Resource].sort().join(",")}`),
    );
    const reads = [jobTopic(prefix, job), replyTopic(prefix, job, clientId)];
    const want = [
      `iot:Connect ${iot}:client/${clientId}`,
      `iot:Subscribe ${reads
        .map((t) => `${iot}:topicfilter/${t}`)
        .sort()
        .join(",")}`,
      `iot:Receive ${reads
        .map((t) => `${iot}:topic/${t}`)
        .sort()
        .join(",")}`,
      `iot:Publish ${iot}:topic/${replayTopic(prefix, job, clientId)}`,
    ];
    if (!response.isAuthenticated || JSON.stringify(granted) !== JSON.stringify(want))
      failures.push(
        `the realtime authorizer grants ${job}'s token ${JSON.stringify(granted)}; expected ${JSON.stringify(want)}`,
      );
    const other = PROBED_JOBS.find((j) => j !== job) ?? "";
    if (granted.some((g) => g.includes(other) || /[*#+]/.test(g)))
      failures.push(
        `the realtime authorizer grants ${job}'s token more than its own job: ${JSON.stringify(granted)}`,
      );
  }
  const parameter = realtimeSecretParameter(prefix);
  if (JSON.stringify(probed.secretReads) !== JSON.stringify([{ Name: parameter, WithDecryption: true }]))
    failures.push(
      `the realtime authorizer read its secret as ${JSON.stringify(probed.secretReads)}; expected one decrypted read of ${parameter}`,
    );
  return failures;
}

/** A policy resource pattern (`*` any run of characters) matches `value`. */
const covers = (pattern: string, value: string) =>
  new RegExp(
    `^${pattern
      .split("*")
      .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
      .join(".*")}$`,
  ).test(value);

/**
 * Across the stage: no role has `iot:*` (or `*`) or an iot action on every resource, and only the
 * roles of the component whose topics they are may publish to them (each component's own roles
 * are held to their plan by the IAM check).
 */
export function iotPublishFailures(run: StageRun): string[] {
  const failures: string[] = [];
  const sample = (prefix: string) =>
    PUBLISHED_TOPICS.map((t) => `arn:aws:iot:${REGION}:${ACCOUNT}:topic/${prefix}/${t}/x`);
  for (const role of run.resources.filter((r) => r.type === "aws:iam/role:Role")) {
    for (const s of inlineStatements(role)) {
      const actions = [s.Action].flat();
      const iot = actions.filter((a) => a === "*" || a.toLowerCase().startsWith("iot:"));
      if (iot.length === 0) continue;
      if (iot.some((a) => a === "*" || a.toLowerCase() === "iot:*"))
        failures.push(
          `role ${role.name}: ${iot.join(", ")} (realtime allows iot:Publish on named topics only)`,
        );
      const resources = [s.Resource].flat();
      if (resources.includes("*")) failures.push(`role ${role.name}: ${iot.join(", ")} on every resource`);
      if (!iot.some((a) => a === "*" || /^iot:(\*|publish)$/i.test(a))) continue;
      for (const component of run.components) {
        if (role.component === component.name) continue;
        const reached = sample(component.realtimePrefix).filter((t) => resources.some((r) => covers(r, t)));
        if (reached.length > 0)
          failures.push(
            `role ${role.name}, not ${component.name}'s, may publish to ${component.name}'s realtime topics`,
          );
      }
    }
  }
  return failures;
}
