import {
  type PublishedTopics,
  realtimeAuthorizerName,
  realtimePrefix,
  realtimeReplayRuleName,
  realtimeReplayRuleSql,
  realtimeSecretParameter,
  topicsArn,
} from "../lib/deploy-plan/realtime-plan";
import { type Build, childName, childOpts } from "./build";
import { functionArgs } from "./lambda-function";
import { type GrantTargets, permissionsFor } from "./permissions";

/**
 * Realtime on IoT Core (docs/architecture.md §25), declared resource by resource rather than with
 * `sst.aws.Realtime`, whose authorizer function gets `iot:*` on `*` and whose link grants
 * `iot:Publish` on `*`: here the authorizer may only read the secret, and each role publishes to
 * its own topic trees (lib/deploy-plan/grants.ts).
 *
 * - the token secret, a SecureString parameter generated at the first deploy and kept after
 *   (`ignoreChanges`: a later deploy doesn't rotate it, which would refuse every token out);
 * - the custom authorizer, signing disabled (the token is the MQTT password, checked by the
 *   function), and Lambda's permission for IoT to invoke it from that authorizer only;
 * - the topic rule on `<prefix>/replay/#` and the replay function it invokes, with its permission.
 */
export interface RealtimeTargets {
  secretArn: $util.Output<string>;
  topicsArn(topics: PublishedTopics): $util.Output<string>;
  /** For every function that publishes (workers, pool, API, enqueue, reaper, cron): prefix and endpoint. */
  env: Record<string, $util.Input<string>>;
  /** For the API, which mints tokens: the authorizer a subscriber's url names, and the secret's parameter. */
  mintEnv: Record<string, $util.Input<string>>;
}

/** The secret, the endpoint and the topics' ARNs: what the other functions' grants and settings name. */
export function createRealtimeTargets(build: Build): RealtimeTargets {
  const opts = childOpts(build);
  const prefix = realtimePrefix($app.name, $app.stage, build.name);
  const parameter = realtimeSecretParameter(prefix);
  const secret = new aws.ssm.Parameter(
    childName(build, "RealtimeHmac"),
    {
      name: parameter,
      type: "SecureString",
      description: "skyforge realtime: signs subscription tokens",
      value: aws.secretsmanager.getRandomPasswordOutput(
        { passwordLength: 64, excludePunctuation: true },
        opts,
      ).randomPassword,
    },
    { ...opts, ignoreChanges: ["value"] },
  );
  const endpoint = aws.iot.getEndpointOutput({ endpointType: "iot:Data-ATS" }, opts).endpointAddress;
  const iot = $util.all([
    aws.getPartitionOutput({}, opts).partition,
    aws.getRegionOutput({}, opts).region,
    aws.getCallerIdentityOutput({}, opts).accountId,
  ]);
  return {
    secretArn: secret.arn,
    topicsArn: (topics) =>
      iot.apply(([partition, region, account]) => topicsArn({ partition, region, account }, prefix, topics)),
    env: { SKYFORGE_REALTIME_PREFIX: prefix, SKYFORGE_REALTIME_ENDPOINT: endpoint },
    mintEnv: {
      SKYFORGE_REALTIME_AUTHORIZER: realtimeAuthorizerName(prefix),
      SKYFORGE_REALTIME_HMAC_PARAMETER: parameter,
    },
  };
}

/** The authorizer and the replay rule, each with its function. */
export function createRealtime(build: Build, targets: GrantTargets & { realtime: RealtimeTargets }) {
  const opts = childOpts(build);
  const { realtime, storage, queues } = targets;
  const prefix = realtimePrefix($app.name, $app.stage, build.name);
  const fn = (part: string, args: sst.aws.FunctionArgs) =>
    new sst.aws.Function(childName(build, part), functionArgs(build, part, args), opts);
  const account = aws.getCallerIdentityOutput({}, opts).accountId;

  const authorizerFunction = fn("RealtimeAuthorizer", {
    handler: build.handlers["realtime-authorizer"],
    timeout: "5 seconds",
    memory: "256 MB",
    permissions: permissionsFor(build, targets, "realtime-authorizer"),
    environment: {
      ...realtime.env,
      SKYFORGE_REALTIME_HMAC_PARAMETER: realtime.mintEnv.SKYFORGE_REALTIME_HMAC_PARAMETER,
    },
  });
  const authorizer = new aws.iot.Authorizer(
    childName(build, "RealtimeAuthorizerIot"),
    {
      name: realtimeAuthorizerName(prefix),
      authorizerFunctionArn: authorizerFunction.arn,
      signingDisabled: true,
      status: "ACTIVE",
      enableCachingForHttp: false,
    },
    opts,
  );
  new aws.lambda.Permission(
    childName(build, "RealtimeAuthorizerInvoke"),
    {
      action: "lambda:InvokeFunction",
      function: authorizerFunction.name,
      principal: "iot.amazonaws.com",
      sourceArn: authorizer.arn,
      sourceAccount: account,
    },
    opts,
  );

  const replayFunction = fn("RealtimeReplay", {
    handler: build.handlers["realtime-replay"],
    timeout: "30 seconds",
    memory: "512 MB",
    permissions: permissionsFor(build, targets, "realtime-replay"),
    environment: { ...storage.env, SKYFORGE_QUEUE_URLS: queues.queueUrls, ...realtime.env },
  });
  const rule = new aws.iot.TopicRule(
    childName(build, "RealtimeReplayRule"),
    {
      name: realtimeReplayRuleName(prefix),
      enabled: true,
      sql: realtimeReplayRuleSql(prefix),
      sqlVersion: "2016-03-23",
      lambdas: [{ functionArn: replayFunction.arn }],
    },
    opts,
  );
  new aws.lambda.Permission(
    childName(build, "RealtimeReplayInvoke"),
    {
      action: "lambda:InvokeFunction",
      function: replayFunction.name,
      principal: "iot.amazonaws.com",
      sourceArn: rule.arn,
      sourceAccount: account,
    },
    opts,
  );
  return { authorizerFunction, authorizer, replayFunction, rule };
}
