import { messageJson, parseReplayTopic, ReplayRequest, replyTopic } from "../job/realtime-wire.ts";
import type { RealtimePublisher, RealtimeService } from "../services/realtime-service.ts";

/**
 * A subscriber's replay request answered (docs/architecture.md §25), the one code for both places:
 * the local broker calls it in-process, and on AWS the replay function does, for each message IoT
 * Core's rule hands it from `<prefix>/replay/#`. The request came on `<prefix>/replay/<job>/<client>`
 * (only a connection holding that job's token may publish there); each event of the answer goes to
 * `<prefix>/replies/<job>/<client>`, in order, the `replayed` marker last.
 */
export interface ReplayCall {
  jobId: string;
  clientId: string;
  request: ReplayRequest;
}

/** The request a message on a replay topic carries, or undefined for any other topic or payload. */
export function readReplayRequest(
  prefix: string,
  message: { topic: string; payload: string },
): ReplayCall | undefined {
  const target = parseReplayTopic(prefix, message.topic);
  const request = ReplayRequest.safeParse(messageJson(message.payload));
  return target && request.success ? { ...target, request: request.data } : undefined;
}

export async function answerReplay(
  realtime: Pick<RealtimeService, "replay">,
  prefix: string,
  call: ReplayCall,
  publisher: RealtimePublisher,
): Promise<void> {
  const topic = replyTopic(prefix, call.jobId, call.clientId);
  await realtime.replay(call.jobId, call.request, (event) => publisher.publish(topic, JSON.stringify(event)));
}
