import { messageJson, queueTopic, readTokenClaims, StatusEvent } from "../lib/job/realtime-wire.ts";
import { connected, Inbox, openConnection, randomHex } from "./realtime-connection.ts";

/** What `tailQueue` takes: POST /queues/{name}/subscriptions' `url` and `token`. */
export interface TailQueueOptions {
  url: string;
  token: string;
  /** Ends the tail (the iterator returns). */
  signal?: AbortSignal;
  /** Called once the queue's topic is subscribed: every status change from then on is yielded. */
  onSubscribed?: () => void;
}

/**
 * A queue's status events as they happen (docs/guide/realtime.md, "A queue's tail"): every change of
 * every job of the queue from the moment it connects (queued, running, waiting, paused, done, dead,
 * cancelled), for a browser or a Node 22+ process holding a queue token. A tail has no read-back: it
 * starts now, and what a dropped message carried is read with GET /jobs/{id}. It runs until
 * `signal` aborts; a lost connection throws (tail again with a fresh token when it has expired).
 */
export async function* tailQueue(options: TailQueueOptions): AsyncGenerator<StatusEvent, void, undefined> {
  const claims = readTokenClaims(options.token);
  if (!claims || !("q" in claims))
    throw new Error("tailQueue: not a queue's token (POST /queues/{name}/subscriptions gives one)");
  const inbox = new Inbox();
  const client = openConnection(
    options.url,
    options.token,
    `sf-${randomHex(12)}`,
    inbox,
    "tailQueue: the connection closed",
  );
  const abort = () => inbox.finish();
  options.signal?.addEventListener("abort", abort);
  try {
    await connected(client);
    const granted = await client.subscribeAsync(queueTopic(claims.p, claims.q), { qos: 0 });
    if (granted.some((g) => g.qos === 128)) throw new Error("tailQueue: the token may not read this queue");
    options.onSubscribed?.();
    for (;;) {
      const message = await inbox.next();
      if (!message) return;
      const event = StatusEvent.safeParse(messageJson(message.text));
      if (event.success) yield event.data;
    }
  } finally {
    options.signal?.removeEventListener("abort", abort);
    client.end(true);
  }
}
