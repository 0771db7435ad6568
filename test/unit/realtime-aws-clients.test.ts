import { IoTDataPlaneClient, PublishCommand } from "@aws-sdk/client-iot-data-plane";
import { GetParameterCommand, SSMClient } from "@aws-sdk/client-ssm";
import { mockClient } from "aws-sdk-client-mock";
import { afterEach, describe, expect, it, vi } from "vitest";
import { iotPublisher } from "../../lib/realtime/iot-publisher.ts";
import { ssmSecret } from "../../lib/realtime/ssm-secret.ts";

/**
 * Realtime's two AWS clients (docs/architecture.md §25): IoT Core's data plane has no emulator and
 * SSM's SecureString none here, so the SDK is mocked (aws-sdk-client-mock, the allowed stand-in):
 * what is checked is the call each sends and what each keeps between calls.
 */
const iot = mockClient(IoTDataPlaneClient);
const ssm = mockClient(SSMClient);
afterEach(() => {
  iot.reset();
  ssm.reset();
});

describe("the IoT data-plane publisher", () => {
  it("publishes each message at QoS 0 to its topic, through one client made on the first publish", async () => {
    iot.on(PublishCommand).resolves({});
    const made = vi.fn(
      (sdk: typeof import("@aws-sdk/client-iot-data-plane")) => new sdk.IoTDataPlaneClient({}),
    );
    const publisher = iotPublisher("abc-ats.iot.us-east-1.amazonaws.com", made);
    expect(made).not.toHaveBeenCalled();
    await publisher.publish("skyforge/app/ci/Jobs/jobs/J1", '{"type":"status"}');
    await publisher.publish("skyforge/app/ci/Jobs/jobs/J1", '{"type":"step"}');
    expect(made).toHaveBeenCalledTimes(1);
    const sent = iot.commandCalls(PublishCommand).map((c) => c.args[0].input);
    expect(sent.map((s) => [s.topic, s.qos, new TextDecoder().decode(s.payload as Uint8Array)])).toEqual([
      ["skyforge/app/ci/Jobs/jobs/J1", 0, '{"type":"status"}'],
      ["skyforge/app/ci/Jobs/jobs/J1", 0, '{"type":"step"}'],
    ]);
  });

  it("sends to the account's data endpoint (the host infra gives) over https", async () => {
    iot.on(PublishCommand).resolves({});
    await iotPublisher("abc-ats.iot.us-east-1.amazonaws.com").publish("t", "{}");
    const client = iot.commandCalls(PublishCommand)[0]?.thisValue as IoTDataPlaneClient | undefined;
    const endpoint = await client?.config.endpoint?.();
    expect(endpoint && `${endpoint.protocol}//${endpoint.hostname}`).toBe(
      "https://abc-ats.iot.us-east-1.amazonaws.com",
    );
  });

  it("rejects a refused publish, so the publish queue retries it and counts its drop", async () => {
    iot.on(PublishCommand).rejects(new Error("ThrottlingException"));
    await expect(iotPublisher("abc-ats.iot.us-east-1.amazonaws.com").publish("t", "{}")).rejects.toThrow(
      "ThrottlingException",
    );
  });
});

describe("the token secret, read from its SecureString parameter", () => {
  it("is read with decryption once per cold start, however many tokens are minted or checked", async () => {
    ssm.on(GetParameterCommand).resolves({ Parameter: { Value: "the-secret" } });
    const secret = ssmSecret("/skyforge/app/ci/Jobs/realtime-hmac");
    expect(ssm.commandCalls(GetParameterCommand)).toHaveLength(0);
    expect(await Promise.all([secret(), secret()])).toEqual(["the-secret", "the-secret"]);
    expect(await secret()).toBe("the-secret");
    expect(ssm.commandCalls(GetParameterCommand).map((c) => c.args[0].input)).toEqual([
      { Name: "/skyforge/app/ci/Jobs/realtime-hmac", WithDecryption: true },
    ]);
  });

  it("keeps no failed read: the next call reads again", async () => {
    ssm
      .on(GetParameterCommand)
      .rejectsOnce(new Error("AccessDeniedException"))
      .resolves({ Parameter: { Value: "the-secret" } });
    const secret = ssmSecret("/p");
    await expect(secret()).rejects.toThrow("AccessDeniedException");
    expect(await secret()).toBe("the-secret");
    expect(ssm.commandCalls(GetParameterCommand)).toHaveLength(2);
  });

  it("refuses a parameter with no value rather than sign with an empty secret", async () => {
    ssm.on(GetParameterCommand).resolves({ Parameter: { Value: "" } });
    await expect(ssmSecret("/p")()).rejects.toThrow("the realtime secret parameter /p has no value");
  });
});
