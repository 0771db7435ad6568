import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import { subscribe } from "../client/realtime.ts";
import type { RealtimeEvent } from "../lib/job/realtime-wire.ts";

/**
 * The realtime scenario's subscribers, in a worker thread of their own (scripts/bench-realtime.ts):
 * a browser following a job runs on another machine, so thousands of MQTT clients decoding every
 * chunk must not take the event loop of the stack being measured. Latencies are read against the
 * wall clock both threads share.
 */

export interface SubscriberTarget {
  url: string;
  token: string;
  /** Drop the connection after this chunk and resume with `from`: the resuming subscriber. */
  dropAfter?: number;
}

export interface Follower {
  chunks: number[];
  chunkLatencyMs: number[];
  statusLatencyMs: number[];
  messages: number;
  ended: boolean;
  reconnects: number;
}

type FromWorker =
  | { type: "connected" }
  | { type: "done"; followers: Follower[] }
  | { type: "failed"; message: string };

/** Retries after a refused or lost connection, as a real subscriber would: from the last chunk seen. */
const RECONNECTS = 5;

async function follow(target: SubscriberTarget, ready: () => void): Promise<Follower> {
  const { url, token, dropAfter } = target;
  const out: Follower = {
    chunks: [],
    chunkLatencyMs: [],
    statusLatencyMs: [],
    messages: 0,
    ended: false,
    reconnects: 0,
  };
  let from: number | undefined;
  let first = true;
  let dropped = false;
  for (let attempt = 0; ; ) {
    let stopped = false;
    try {
      for await (const event of subscribe({ url, token, ...(from !== undefined ? { from } : {}) })) {
        if (first) {
          first = false;
          ready();
        }
        // The resuming subscriber's read-back chunks are late by design: its latencies are not counted.
        take(out, event, dropAfter === undefined);
        if (event.type === "stream" && !event.closed) from = event.seq;
        if (dropAfter !== undefined && !dropped && from === dropAfter) {
          dropped = true;
          stopped = true;
          break;
        }
      }
      if (!stopped) return out;
    } catch (error) {
      if (++attempt > RECONNECTS) throw error;
      out.reconnects += 1;
      await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
    }
  }
}

function take(out: Follower, event: RealtimeEvent, timed: boolean) {
  const now = Date.now();
  out.messages += 1;
  if (event.type === "stream" && !event.closed) {
    out.chunks.push(event.seq);
    if (timed) out.chunkLatencyMs.push(now - event.at);
  }
  if (timed && event.type === "status" && event.status !== "queued") out.statusLatencyMs.push(now - event.at);
  if (event.type === "end") out.ended = true;
}

/**
 * Starts the subscribers in a worker: `connected` resolves once each has its first event (the
 * job's status read back), `followers` once each has seen its job's end.
 */
export function startSubscribers(targets: readonly SubscriberTarget[]): {
  connected: Promise<void>;
  followers: Promise<Follower[]>;
  stop: () => Promise<number>;
} {
  const worker = new Worker(new URL(import.meta.url), { workerData: targets });
  const connected = Promise.withResolvers<void>();
  const followers = Promise.withResolvers<Follower[]>();
  worker.on("message", (message: FromWorker) => {
    if (message.type === "connected") connected.resolve();
    else if (message.type === "done") followers.resolve(message.followers);
    else {
      const error = new Error(`realtime subscribers: ${message.message}`);
      connected.reject(error);
      followers.reject(error);
    }
  });
  worker.on("error", (error) => {
    connected.reject(error);
    followers.reject(error);
  });
  // Handled by whoever awaits the other first: a failure rejects both.
  connected.promise.catch(() => undefined);
  return { connected: connected.promise, followers: followers.promise, stop: () => worker.terminate() };
}

if (!isMainThread && parentPort) {
  const port = parentPort;
  const targets = workerData as SubscriberTarget[];
  let waiting = targets.length;
  const ready = () => {
    if (--waiting === 0) port.postMessage({ type: "connected" } satisfies FromWorker);
  };
  Promise.all(
    targets.map((target) => {
      let once = false;
      return follow(target, () => {
        if (once) return;
        once = true;
        ready();
      });
    }),
  ).then(
    (followers) => port.postMessage({ type: "done", followers } satisfies FromWorker),
    (error: unknown) =>
      port.postMessage({
        type: "failed",
        message: String((error as Error)?.message ?? error),
      } satisfies FromWorker),
  );
}
