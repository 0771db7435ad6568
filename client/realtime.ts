import {
  type EndEvent,
  groupTopic,
  jobTopic,
  messageJson,
  PublishedEvent,
  type RealtimeEvent,
  ReplyMessage,
  readTokenClaims,
  replayTopic,
  replyTopic,
  type StatusEvent,
} from "../lib/job/realtime-wire.ts";
import { connected, Inbox, openConnection, randomHex } from "./realtime-connection.ts";

export type {
  EndEvent,
  GroupEvent,
  RealtimeEvent,
  StatusEvent,
  StepEvent,
  StreamEvent,
} from "../lib/job/realtime-wire.ts";
export { type TailQueueOptions, tailQueue } from "./realtime-queue.ts";

/** What `subscribe` takes: POST /jobs/{id}/subscriptions' `url` and `token`, and a cursor to resume from. */
export interface SubscribeOptions {
  url: string;
  token: string;
  /** The last stream sequence number seen: chunks up to it are not yielded again. */
  from?: number;
  /** Ends the subscription (the iterator returns). */
  signal?: AbortSignal;
}

const TERMINAL = new Set(["done", "dead", "cancelled"]);

/**
 * A job's events as they happen (docs/guide/realtime.md), for a browser or a Node 22+ process holding
 * only a subscription token: its status changes, its recorded steps, its streamed chunks (each once,
 * in order per stream), then `{ type: "end" }` when it ended, after which the iterator returns.
 * It connects over MQTT on WebSocket (IoT Core on AWS, the local stack's broker locally), subscribes
 * to its job's topic, then reads back what it missed (the job's status now, the chunks after `from`)
 * before it yields live events; a gap in a stream's numbers, and the job's end, each read back once
 * more, so a message the stack dropped still arrives. A lost connection throws: subscribe again with
 * `from` set to the last `seq` seen.
 */
export async function* subscribe(options: SubscribeOptions): AsyncGenerator<RealtimeEvent, void, undefined> {
  const claims = readTokenClaims(options.token);
  if (!claims || !("j" in claims))
    throw new Error(
      claims
        ? "subscribe: a queue's token; tailQueue reads a queue's events"
        : "subscribe: not a subscription token (POST /jobs/{id}/subscriptions gives one)",
    );
  const { p: prefix, j: jobId } = claims;
  const clientId = `sf-${randomHex(12)}`;
  const inbox = new Inbox();
  const client = openConnection(
    options.url,
    options.token,
    clientId,
    inbox,
    "subscribe: the connection closed before the job ended",
  );
  const abort = () => inbox.finish();
  options.signal?.addEventListener("abort", abort);
  try {
    await connected(client);
    const topics = [jobTopic(prefix, jobId), replyTopic(prefix, jobId, clientId)];
    if (claims.g) topics.push(groupTopic(prefix, claims.g));
    const granted = await client.subscribeAsync(topics, { qos: 0 });
    if (granted.some((g) => g.qos === 128)) throw new Error("subscribe: the token may not read this job");

    const baseline = options.from ?? 0;
    const last = new Map<string, number>();
    /** Steps yielded: a replay reads back all recorded so far, a live message may repeat one. */
    const steps = new Set<string>();
    const seen = (stream: string) => last.get(stream) ?? baseline;
    /** The replay request in flight (its number), if any. */
    let replaying: number | undefined;
    let requests = 0;
    let terminal: StatusEvent | undefined;
    /** The first replay whose answer is known to hold every chunk of the ended job. */
    let completeFrom = Number.POSITIVE_INFINITY;
    const held: PublishedEvent[] = [];
    /** The job ended and every chunk is in: yield its end without another read-back. */
    let finished = false;
    const askReplay = () => {
      replaying = ++requests;
      const request = { id: `r${replaying}`, from: baseline, streams: Object.fromEntries(last) };
      client.publish(replayTopic(prefix, jobId, clientId), JSON.stringify(request), { qos: 0 });
    };
    /** Yields what a live or replayed event adds; a gap or the job's end asks for a replay first. */
    function* take(event: PublishedEvent, live: boolean): Generator<RealtimeEvent> {
      if (event.type === "stream") {
        const at = seen(event.stream);
        if (event.seq <= at) return;
        if (live && (replaying || event.seq > at + 1)) {
          held.push(event);
          if (!replaying) askReplay();
          return;
        }
        last.set(event.stream, event.seq);
        yield event;
        return;
      }
      if (event.type === "status" && event.jobId === jobId && TERMINAL.has(event.status)) {
        terminal ??= event;
        // The end names each stream's last number: holding them all, nothing is left to read back.
        const complete =
          event.streams !== undefined && Object.entries(event.streams).every(([s, n]) => seen(s) >= n);
        if (live && !replaying && complete) {
          finished = true;
          return;
        }
        // A replay reads the status before the chunks, so its own answer is complete; a live end
        // needs a replay asked after it (the chunks' live messages may have been dropped).
        completeFrom = Math.min(completeFrom, live ? requests + 1 : (replaying ?? requests));
        if (live && !replaying) askReplay();
        return;
      }
      if (live && replaying) held.push(event);
      else if (event.type !== "step" || event.jobId !== jobId) yield event;
      else if (!steps.has(event.step)) {
        steps.add(event.step);
        yield event;
      }
    }

    askReplay();
    for (;;) {
      const message = await inbox.next();
      if (!message) return;
      const parsed = messageJson(message.text);
      if (message.topic === replyTopic(prefix, jobId, clientId)) {
        const reply = ReplyMessage.safeParse(parsed);
        if (!reply.success) continue;
        if (reply.data.type !== "replayed") {
          yield* take(reply.data, false);
          continue;
        }
        if (reply.data.id !== `r${replaying}`) continue;
        const answered = replaying as number;
        replaying = undefined;
        for (const event of held.splice(0)) yield* take(event, false);
        if (terminal && answered < completeFrom) askReplay();
        else if (terminal) {
          yield terminal;
          yield { type: "end", jobId, status: terminal.status as EndEvent["status"] };
          return;
        }
        continue;
      }
      const event = PublishedEvent.safeParse(parsed);
      if (event.success) yield* take(event.data, true);
      if (finished && terminal) {
        yield terminal;
        yield { type: "end", jobId, status: terminal.status as EndEvent["status"] };
        return;
      }
    }
  } finally {
    options.signal?.removeEventListener("abort", abort);
    client.end(true);
  }
}
