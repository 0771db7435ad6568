import mqtt from "mqtt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { groupTopic, jobTopic, replyTopic } from "../../lib/job/realtime-wire.ts";
import { iotPublisher } from "../../lib/realtime/iot-publisher.ts";
import { mintToken } from "../../lib/realtime/token.ts";
import type { RealtimeService } from "../../lib/services/realtime-service.ts";
import { LOCAL_AWS } from "../../local/emulators.ts";
import { type RealtimeBroker, startRealtimeBroker } from "../../local/realtime-broker.ts";
import { withinMs } from "../support/wait.ts";

/**
 * The local broker's publish path (local/realtime-publish-path.ts): the pool's process publishes its
 * jobs' events through the same data-plane publisher as on AWS, its endpoint pointed at the broker,
 * and a subscriber holding that job's token receives them. Only this project's signed SDK calls are
 * answered, and only to the stack's job and group topics.
 */
const prefix = "skyforge/local";
let broker: RealtimeBroker;
beforeAll(async () => {
  broker = await startRealtimeBroker({
    host: "127.0.0.1",
    prefix,
    now: () => Date.now(),
    // No replay is asked here: the subscriber below subscribes and reads live messages only.
    realtime: () => ({ replay: async () => {} }) as unknown as RealtimeService,
  });
});
afterAll(() => broker?.close());

const poolPublisher = () =>
  iotPublisher(
    "127.0.0.1",
    (sdk) => new sdk.IoTDataPlaneClient({ ...LOCAL_AWS, endpoint: broker.publishUrl }),
  );

describe("the local broker's publish path", () => {
  it("delivers the pool's publish to a subscriber of the job's topic", async () => {
    const token = mintToken({ p: prefix, j: "JOBA", exp: Date.now() + 600_000 }, broker.secret);
    const subscriber = mqtt.connect(broker.url, { clientId: "sf-1", username: "token", password: token });
    try {
      await withinMs(subscriber.subscribeAsync(jobTopic(prefix, "JOBA")), "the subscription", 5_000);
      const received = new Promise<[string, string]>((resolve) =>
        subscriber.on("message", (topic, payload) => resolve([topic, payload.toString()])),
      );
      await poolPublisher().publish(jobTopic(prefix, "JOBA"), '{"type":"status","status":"running"}');
      expect(await withinMs(received, "the message", 5_000)).toEqual([
        jobTopic(prefix, "JOBA"),
        '{"type":"status","status":"running"}',
      ]);
      await poolPublisher().publish(groupTopic(prefix, "G1"), "{}");
    } finally {
      subscriber.end(true);
    }
  });

  it("refuses a topic outside the stack's jobs and groups, a web page, and an unsigned caller", async () => {
    await expect(poolPublisher().publish(replyTopic(prefix, "JOBA", "sf-1"), "{}")).rejects.toThrow();
    await expect(poolPublisher().publish("skyforge/other/jobs/JOBA", "{}")).rejects.toThrow();
    const url = `${broker.publishUrl}/topics/${encodeURIComponent(jobTopic(prefix, "JOBA"))}`;
    const signedLooking = `AWS4-HMAC-SHA256 Credential=${LOCAL_AWS.credentials.accessKeyId}/20260101/us-east-1/iotdata/aws4_request`;
    const fromPage = await fetch(url, {
      method: "POST",
      headers: { origin: "https://evil.example", authorization: signedLooking },
      body: "{}",
    });
    expect(fromPage.status).toBe(403);
    const unsigned = await fetch(url, { method: "POST", body: "{}" });
    expect(unsigned.status).toBe(403);
  });
});
