import { GetParameterCommand, SSMClient } from "@aws-sdk/client-ssm";
import { mockClient } from "aws-sdk-client-mock";
import { afterEach, describe, expect, it } from "vitest";
import { app } from "../../app/index.ts";
import { realtimeAuthorizerHandler } from "../../functions/handlers.ts";
import { realtimeConfigFromEnv, realtimeSettingsFromEnv } from "../../functions/realtime-config.ts";
import { ConfigError } from "../../lib/errors.ts";
import { jobTopic } from "../../lib/job/realtime-wire.ts";
import { mintToken } from "../../lib/realtime/token.ts";

/**
 * Realtime's deployed entry points and settings (functions/realtime-*.ts): the authorizer as IoT
 * Core invokes it, its secret read from SSM (mocked: no SSM emulator here), and what the other
 * functions read of the environment infra sets.
 */
const ssm = mockClient(SSMClient);
afterEach(() => ssm.reset());

const prefix = "skyforge/app/ci/Jobs";
const endpoint = "abc-ats.iot.us-east-1.amazonaws.com";
const env = {
  SKYFORGE_REALTIME_PREFIX: prefix,
  SKYFORGE_REALTIME_ENDPOINT: endpoint,
  SKYFORGE_REALTIME_HMAC_PARAMETER: `/${prefix}/realtime-hmac`,
};
const ARN = "arn:aws:lambda:us-east-1:123456789012:function:JobsRealtimeAuthorizer";
const connect = (token: string, clientId = "sf-1") => ({
  protocolData: { mqtt: { username: "token", password: Buffer.from(token).toString("base64"), clientId } },
});

describe("the realtime authorizer's entry", () => {
  it("checks each token with the secret read once from its parameter, granting its own job's topic", async () => {
    ssm.on(GetParameterCommand).resolves({ Parameter: { Value: "deployed-secret" } });
    const handler = realtimeAuthorizerHandler(app, env);
    const exp = Date.now() + 600_000;
    const good = await handler(connect(mintToken({ p: prefix, j: "JOBA", exp }, "deployed-secret")), {
      invokedFunctionArn: ARN,
    });
    expect(good.isAuthenticated).toBe(true);
    const subscribe = good.policyDocuments[0]?.Statement.find((s) => s.Action === "iot:Subscribe");
    expect(subscribe?.Resource).toContain(
      `arn:aws:iot:us-east-1:123456789012:topicfilter/${jobTopic(prefix, "JOBA")}`,
    );
    const forged = await handler(connect(mintToken({ p: prefix, j: "JOBA", exp }, "guessed")), {
      invokedFunctionArn: ARN,
    });
    expect(forged).toMatchObject({ isAuthenticated: false, policyDocuments: [] });
    expect(ssm.commandCalls(GetParameterCommand).map((c) => c.args[0].input)).toEqual([
      { Name: `/${prefix}/realtime-hmac`, WithDecryption: true },
    ]);
  });

  it("fails at init without its secret's parameter (never a secret in the environment)", () => {
    const { SKYFORGE_REALTIME_HMAC_PARAMETER: _, ...without } = env;
    expect(() => realtimeAuthorizerHandler(app, without)).toThrow(ConfigError);
  });

  it("rejects an invocation whose secret can't be read: IoT refuses that connection", async () => {
    ssm.on(GetParameterCommand).rejects(new Error("AccessDeniedException"));
    const handler = realtimeAuthorizerHandler(app, env);
    await expect(handler(connect("x.y"), { invokedFunctionArn: ARN })).rejects.toThrow(
      "AccessDeniedException",
    );
  });
});

describe("realtime's settings on AWS", () => {
  it("publishes nowhere without them (the reaper, cron, the enqueue function)", () => {
    expect(realtimeConfigFromEnv({})).toBeUndefined();
  });

  it("gives the API the url a subscriber connects to: IoT's WebSocket endpoint naming the authorizer", () => {
    const config = realtimeConfigFromEnv({ ...env, SKYFORGE_REALTIME_AUTHORIZER: "skyforge-app-ci-Jobs" });
    expect(config?.url?.()).toBe(`wss://${endpoint}/mqtt?x-amz-customauthorizer-name=skyforge-app-ci-Jobs`);
    expect(config?.prefix).toBe(prefix);
    expect(typeof config?.secret).toBe("function");
    // A worker mints nothing: no secret, no url.
    const worker = realtimeConfigFromEnv({
      SKYFORGE_REALTIME_PREFIX: prefix,
      SKYFORGE_REALTIME_ENDPOINT: endpoint,
    });
    expect(worker?.secret).toBeUndefined();
    expect(worker?.url).toBeUndefined();
  });

  it("refuses half a setting, a prefix with wildcards and an endpoint that isn't a host", () => {
    expect(() => realtimeSettingsFromEnv({ SKYFORGE_REALTIME_PREFIX: prefix })).toThrow(
      "SKYFORGE_REALTIME_PREFIX and SKYFORGE_REALTIME_ENDPOINT are set together",
    );
    expect(() => realtimeSettingsFromEnv({ ...env, SKYFORGE_REALTIME_PREFIX: "skyforge/#" })).toThrow(
      ConfigError,
    );
    expect(() => realtimeSettingsFromEnv({ ...env, SKYFORGE_REALTIME_ENDPOINT: "https://x/y" })).toThrow(
      ConfigError,
    );
  });
});
