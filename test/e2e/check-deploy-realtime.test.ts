import { describe, expect, test } from "vitest";
import { checkDeploy } from "../../scripts/deploy/check-deploy.ts";
import { useCheckDeployCopy } from "../support/check-deploy-copy.ts";

/**
 * The offline deploy proof must fail when realtime's AWS side is broken on purpose
 * (docs/architecture.md §25, "On AWS"). Each case edits one file in a copy of the project, runs
 * SST's real components on it for one stage, and expects the named failure; the untouched copy
 * passes (test/e2e/check-deploy.test.ts), so a failure can only come from the edit.
 */

const project = useCheckDeployCopy("skyforge-check-deploy-realtime-");

describe("check:deploy on SST's own components: realtime", () => {
  test("an authorizer that grants a token more than its own job, or lets an expired one in, fails", async () => {
    // The authorizer's bundle is asked as it deploys: the copy's own policy code is what answers.
    const everyJob = await project.failuresAfter(
      "lib/realtime/policy.ts",
      "    jobTopic(prefix, claims.j),",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the replacement source text.
      "    `${prefix}/jobs/#`,",
    );
    expect(everyJob).toContainEqual(
      expect.stringMatching(
        /^Jobs: the realtime authorizer grants job-a's token more than its own job: .*jobs\/#/,
      ),
    );
    const expired = await project.failuresAfter(
      "lib/realtime/token.ts",
      'if (claims.exp <= now) return { ok: false, reason: "the token has expired" };',
      "",
    );
    expect(expired).toContainEqual("Jobs: the realtime authorizer lets an expired token connect");
  }, 120_000);

  test("a publish grant widened to every resource, or to the whole prefix, fails", async () => {
    const everywhere = await project.failuresAfter(
      "infra/permissions.ts",
      "return targets.realtime.topicsArn(ref.topics);",
      'return "*";',
    );
    expect(everywhere).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/role \S+: iot:Publish on every resource$/),
        expect.stringMatching(/role \S+ \(worker\): extra statement .*"iot:Publish".*"Resource":\["\*"/),
      ]),
    );
    const wholePrefix = await project.failuresAfter(
      "lib/deploy-plan/realtime-plan.ts",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: lib/deploy-plan/realtime-plan.ts's source text.
      "topic/${prefix}/${topics}/*",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the replacement source text.
      "topic/${prefix}/*",
    );
    expect(wholePrefix).toContainEqual(
      expect.stringMatching(
        /role JobsApiHandler\S*: wildcard resource arn:aws:iot:us-east-1:123456789012:topic\/skyforge\/\S+\/ci\/Jobs\/\*$/,
      ),
    );
  }, 120_000);

  test("iot:* on a skyforge role, or a role outside skyforge that may publish to its topics, fails", async () => {
    const iotStar = await project.failuresAfter(
      "infra/realtime.ts",
      'permissions: permissionsFor(build, targets, "realtime-authorizer"),',
      'permissions: [...permissionsFor(build, targets, "realtime-authorizer"), { actions: ["iot:*"], resources: ["*"] }],',
    );
    expect(iotStar).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /role JobsRealtimeAuthorizer\S*: iot:\* \(realtime allows iot:Publish on named topics only\)/,
        ),
        expect.stringMatching(
          /role JobsRealtimeAuthorizer\S* \(realtime-authorizer\): extra statement .*iot:\*/,
        ),
      ]),
    );
    const outsider = await project.failuresAfter(
      "sst.config.ts",
      'const jobs = new Skyforge("Jobs", { app: "app/index.ts" });',
      [
        'const jobs = new Skyforge("Jobs", { app: "app/index.ts" });',
        'new sst.aws.Function("Outsider", { handler: ".sst/skyforge/Jobs/api.handler",',
        '  permissions: [{ actions: ["iot:Publish"], resources: ["arn:aws:iot:us-east-1:123456789012:topic/skyforge/*"] }] });',
      ].join("\n"),
    );
    expect(outsider).toContainEqual(
      expect.stringMatching(/role Outsider\S*, not Jobs's, may publish to Jobs's realtime topics/),
    );
  }, 120_000);

  test("IoT allowed to invoke the authorizer from any source, or a secret kept in plain text, fails", async () => {
    const anySource = await project.failuresAfter(
      "infra/realtime.ts",
      "      sourceArn: authorizer.arn,\n",
      "",
    );
    expect(anySource).toContainEqual(
      expect.stringMatching(/^Jobs: IoT may invoke .*RealtimeAuthorizer\S* from undefined.*; expected /),
    );
    const plain = await project.failuresAfter(
      "infra/realtime.ts",
      'type: "SecureString",',
      'type: "String",',
    );
    expect(plain).toContainEqual(
      expect.stringMatching(
        /^Jobs: realtime's secret is not the SecureString \/skyforge\/\S+\/ci\/Jobs\/realtime-hmac$/,
      ),
    );
  }, 120_000);

  test("a stage whose name holds a word like token or secret passes: realtime's topic prefix carries it, and a name is no credential", async () => {
    const [report] = await checkDeploy(project.dir, [{ stage: "Token-Secrets", dev: false }]);
    expect(report?.failures).toEqual([]);
    // The check still sees a credential-like value beside those names.
    const leaked = await project.failuresAfter(
      "infra/realtime.ts",
      "env: { SKYFORGE_REALTIME_PREFIX: prefix,",
      'env: { SKYFORGE_REALTIME_PREFIX: prefix, SKYFORGE_REALTIME_KEY: "api-token-1234",',
    );
    expect(leaked).toContainEqual(
      expect.stringMatching(/'s SKYFORGE_REALTIME_KEY carries more than names and URLs: api-token-1234$/),
    );
  }, 120_000);
});
