import { describe, expect, it } from "vitest";
import { systemClock } from "../../lib/clock.ts";
import { replayTopic, replyTopic } from "../../lib/job/realtime-wire.ts";
import { silentLog } from "../../lib/observability/log.ts";
import { realtimeReplayHandler } from "../../lib/realtime/replay-handler.ts";
import type { RealtimePublisher } from "../../lib/services/realtime-service.ts";
import { harnessPerTest, settled } from "../support/engine-harness.ts";

/**
 * Realtime's replay function on AWS (lib/realtime/replay-handler.ts), against dynalite: IoT Core's
 * rule hands it a request's topic and its payload as base64, and it answers from the table what the
 * local broker answers in-process (lib/realtime/replay-answer.ts), on the requester's reply topic.
 * IoT's data plane has no emulator: the publisher records what would be published.
 */
const harness = harnessPerTest();
const prefix = "skyforge/app/ci/Jobs";

function recorder(): RealtimePublisher & { sent: { topic: string; event: Record<string, unknown> }[] } {
  const sent: { topic: string; event: Record<string, unknown> }[] = [];
  return {
    sent,
    publish: async (topic, payload) => {
      sent.push({ topic, event: JSON.parse(payload) as Record<string, unknown> });
    },
  };
}

const ruleMessage = (topic: string, payload: string) => ({
  topic,
  payload: Buffer.from(payload).toString("base64"),
});

describe("the replay function", () => {
  it("answers a request with the job's status, its chunks after `from`, then the marker, on the requester's reply topic", async () => {
    const h = await harness.create({ clock: systemClock });
    const { job } = await h.engine.producer.enqueue({ kind: "llm-echo", payload: { text: "one two three" } });
    await h.worker(await h.receive(1));
    await settled(h, job.id, "done");
    const publisher = recorder();
    const handler = realtimeReplayHandler({ realtime: h.engine.realtime, prefix, publisher, log: silentLog });

    const answer = await handler(ruleMessage(replayTopic(prefix, job.id, "sf-1"), '{"id":"r1","from":1}'));

    expect(answer).toEqual({ answered: true });
    expect(new Set(publisher.sent.map((s) => s.topic))).toEqual(
      new Set([replyTopic(prefix, job.id, "sf-1")]),
    );
    expect(
      publisher.sent.map(({ event }) =>
        event.type === "stream"
          ? `${event.seq}:${event.chunk ?? "closed"}`
          : `${event.type}:${event.status ?? event.id}`,
      ),
    ).toEqual(["status:done", "2:two", "3:three", "4:closed", "replayed:r1"]);
  });

  it("answers nothing to a message that is not a replay request, on any topic", async () => {
    const h = await harness.create({ clock: systemClock });
    const publisher = recorder();
    const handler = realtimeReplayHandler({ realtime: h.engine.realtime, prefix, publisher, log: silentLog });
    for (const event of [
      ruleMessage(replayTopic(prefix, "JOBA", "sf-1"), "not json"),
      ruleMessage(replayTopic(prefix, "JOBA", "sf-1"), '{"id":"r1","from":"x"}'),
      ruleMessage(`${prefix}/jobs/JOBA`, '{"id":"r1","from":0}'),
      ruleMessage(`skyforge/other/ci/Jobs/replay/JOBA/sf-1`, '{"id":"r1","from":0}'),
      { topic: replayTopic(prefix, "JOBA", "sf-1") },
      "anything",
    ])
      expect(await handler(event)).toEqual({ answered: false });
    expect(publisher.sent).toEqual([]);
  });

  it("rejects when an answer can't be published, so Lambda's retry answers again", async () => {
    const h = await harness.create({ clock: systemClock });
    const { job } = await h.engine.producer.enqueue({ kind: "llm-echo", payload: { text: "a" } });
    const handler = realtimeReplayHandler({
      realtime: h.engine.realtime,
      prefix,
      publisher: { publish: async () => Promise.reject(new Error("ThrottlingException")) },
      log: silentLog,
    });
    await expect(
      handler(ruleMessage(replayTopic(prefix, job.id, "sf-1"), '{"id":"r1","from":0}')),
    ).rejects.toThrow("ThrottlingException");
  });
});
