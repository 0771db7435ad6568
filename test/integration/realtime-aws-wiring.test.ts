import { IoTDataPlaneClient, PublishCommand } from "@aws-sdk/client-iot-data-plane";
import { GetParameterCommand, SSMClient } from "@aws-sdk/client-ssm";
import type { Context } from "aws-lambda";
import { mockClient } from "aws-sdk-client-mock";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { app } from "../../app/index.ts";
import { engineFromEnv } from "../../functions/engine-config.ts";
import { apiHandler, realtimeAuthorizerHandler } from "../../functions/handlers.ts";
import { jobTopic, queueTopic } from "../../lib/job/realtime-wire.ts";
import type { JobItem } from "../../lib/store/job-item.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import { httpApiEvent } from "../support/lambda-events.ts";
import { defaultQueue } from "../support/test-app.ts";
import {
  emulatorsForFile,
  engineWiring,
  type FreshResources,
  freshResources,
} from "../support/test-emulators.ts";

/**
 * Realtime as deployed, through the real entry points on the environment infra sets (infra/realtime.ts),
 * against the emulators (dynalite and fauxqs): the API mints a token with the secret it reads from SSM,
 * the authorizer checks it with the secret it reads, and the engine publishes through IoT's data
 * plane. SSM and IoT have no emulator here: their SDK clients are mocked (aws-sdk-client-mock).
 */
const emulators = emulatorsForFile();
const ssm = mockClient(SSMClient);
const iot = mockClient(IoTDataPlaneClient);
const prefix = "skyforge/app/ci/Jobs";
const endpoint = "abc-ats.iot.us-east-1.amazonaws.com";
const realtimeEnv = {
  SKYFORGE_REALTIME_PREFIX: prefix,
  SKYFORGE_REALTIME_ENDPOINT: endpoint,
  SKYFORGE_REALTIME_AUTHORIZER: "skyforge-app-ci-Jobs",
  SKYFORGE_REALTIME_HMAC_PARAMETER: `/${prefix}/realtime-hmac`,
};
const ARN = "arn:aws:lambda:us-east-1:123456789012:function:JobsRealtimeAuthorizer";

let fresh: FreshResources;
let env: Record<string, string>;
const saved = { ...process.env };
beforeAll(async () => {
  const emu = emulators();
  fresh = await freshResources(emu, [defaultQueue], { table: "rt", queues: "rt", bucket: "rt" });
  const wiring = engineWiring(fresh);
  env = {
    SKYFORGE_TABLE: wiring.table,
    SKYFORGE_CLAIMS_BUCKET: wiring.claimsBucket,
    SKYFORGE_QUEUE_URLS: JSON.stringify(Object.fromEntries(wiring.queueUrls)),
    ...realtimeEnv,
  };
  // What the Lambda runtime provides, pointed at the emulators; the functions read the rest from `env`.
  Object.assign(process.env, {
    AWS_REGION: "us-east-1",
    AWS_ACCESS_KEY_ID: "local",
    AWS_SECRET_ACCESS_KEY: "local",
    AWS_ENDPOINT_URL_DYNAMODB: emu.dynamodb.endpoint,
    AWS_ENDPOINT_URL_SQS: emu.sqs.endpoint,
  });
}, 60_000);
afterAll(() => {
  process.env = saved;
  fresh?.destroy();
  // The mocks patch the SDK's classes for the whole worker: the next file (a real publish path) needs them back.
  ssm.restore();
  iot.restore();
});
afterEach(() => {
  ssm.reset();
  iot.reset();
});

const connect = (token: string, clientId = "sf-1") => ({
  protocolData: { mqtt: { username: "token", password: Buffer.from(token).toString("base64"), clientId } },
});

describe("realtime on AWS, through the deployed entry points", () => {
  it("a token the API mints is one the authorizer grants its job's topic, each reading the secret once from SSM", async () => {
    ssm.on(GetParameterCommand).resolves({ Parameter: { Value: "the-deployed-secret" } });
    const { engine } = engineFromEnv(app, "skyforge-api", {}, env);
    const { job } = await engine.producer.enqueue({ kind: "llm-echo", payload: { text: "hi" } });
    const first = await engine.realtime.subscribe(job.id, {});
    const second = await engine.realtime.subscribe(job.id, { expiresInSeconds: 600 });
    expect(first.url).toBe(`wss://${endpoint}/mqtt?x-amz-customauthorizer-name=skyforge-app-ci-Jobs`);

    const authorizer = realtimeAuthorizerHandler(app, env);
    for (const { token } of [first, second]) {
      const answer = await authorizer(connect(token), { invokedFunctionArn: ARN });
      expect(answer.isAuthenticated).toBe(true);
      expect(
        answer.policyDocuments[0]?.Statement.find((s) => s.Action === "iot:Subscribe")?.Resource,
      ).toContain(`arn:aws:iot:us-east-1:123456789012:topicfilter/${jobTopic(prefix, job.id)}`);
    }
    // One read for the API's two tokens, one for the authorizer's two checks.
    expect(ssm.commandCalls(GetParameterCommand)).toHaveLength(2);
  });

  it("a deployed function publishes a job's events through IoT's data plane, on the stack's topics", async () => {
    iot.on(PublishCommand).resolves({});
    const { engine } = engineFromEnv(app, "skyforge-worker", {}, env);
    const { job } = await engine.producer.enqueue({ kind: "llm-echo", payload: { text: "hi" } });
    engine.realtime.running({ ...((await getJob(engine.store, job.id)) as JobItem), status: "running" });
    await engine.realtime.drain();
    const sent = iot.commandCalls(PublishCommand).map((c) => c.args[0].input);
    // The enqueue's queued and the claim's running, each on the job's topic and its queue's.
    expect(new Set(sent.map((s) => s.topic))).toEqual(
      new Set([jobTopic(prefix, job.id), queueTopic(prefix, job.queue)]),
    );
    const onJob = sent
      .filter((s) => s.topic === jobTopic(prefix, job.id))
      .map((s) => JSON.parse(new TextDecoder().decode(s.payload as Uint8Array)));
    expect(onJob.at(-1)).toMatchObject({ type: "status", jobId: job.id, status: "running" });
  });

  it("the API function returns only once a cancel's publish went out (Lambda would freeze it otherwise)", async () => {
    let published = false;
    iot.on(PublishCommand).callsFake(async () => {
      await new Promise((resolve) => setTimeout(resolve, 200));
      published = true;
      return {};
    });
    Object.assign(process.env, env);
    const { engine } = engineFromEnv(app, "skyforge-api", {}, env);
    const { job } = await engine.producer.enqueue({ kind: "llm-echo", payload: { text: "hi" } });
    const api = apiHandler(app);
    const answer = await api(httpApiEvent({ method: "POST", path: `/jobs/${job.id}/cancel` }), {} as Context);
    expect(answer).toMatchObject({ statusCode: 200 });
    expect(published).toBe(true);
  });
});
