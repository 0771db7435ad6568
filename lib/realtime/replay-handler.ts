import * as z from "zod";
import type { Log } from "../observability/log.ts";
import type { RealtimePublisher, RealtimeService } from "../services/realtime-service.ts";
import { answerReplay, readReplayRequest } from "./replay-answer.ts";

/**
 * Realtime's replay function on AWS (docs/architecture.md §25): IoT Core's topic rule on
 * `<prefix>/replay/#` invokes it with each request's topic and its payload as base64 (the rule's
 * `SELECT topic() AS topic, encode(*, 'base64') AS payload`), and it answers as the local broker does
 * (lib/realtime/replay-answer.ts): the job's status, steps and chunks, on the requester's reply topic.
 * Its role reads the table and publishes to `<prefix>/replies/*` only. Anything but a replay request
 * is logged and answered with nothing; a publish that fails rejects the invocation, and Lambda's
 * retry answers again (the subscriber drops what it holds already).
 */
const RuleMessage = z.object({ topic: z.string(), payload: z.string() });

export interface RealtimeReplayConfig {
  realtime: Pick<RealtimeService, "replay">;
  prefix: string;
  publisher: RealtimePublisher;
  log: Log;
}

export function realtimeReplayHandler(config: RealtimeReplayConfig) {
  return async (event: unknown): Promise<{ answered: boolean }> => {
    const message = RuleMessage.safeParse(event);
    const call =
      message.success &&
      readReplayRequest(config.prefix, {
        topic: message.data.topic,
        payload: Buffer.from(message.data.payload, "base64").toString("utf8"),
      });
    if (!call) {
      config.log.warn("not a replay request", { topic: message.success ? message.data.topic : undefined });
      return { answered: false };
    }
    await answerReplay(config.realtime, config.prefix, call, config.publisher);
    return { answered: true };
  };
}
