import { app } from "../app/index.ts";
import { realtimePrices } from "../bench/prices.ts";
import { subscribe } from "../client/realtime.ts";
import type { RealtimeEvent } from "../lib/job/realtime-wire.ts";
import { startLocalStack } from "../local/stack.ts";
import type { ScenarioOutcome } from "./bench-all.ts";
import { intEnv, percentile, round } from "./bench-config.ts";

/**
 * The realtime scenario (`npm run bench -- --scenario realtime`; docs/architecture.md §25): JOBS
 * `llm-echo` jobs of WORDS words each, SUBSCRIBERS subscribers per job on the local stack, one of
 * them per job dropping after DROP_AFTER chunks and resuming with `from`. The queue is paused while
 * every subscriber connects and reads back (so the chunks are measured live), then resumed.
 * Measured: chunk latency from the handler's `write` (the chunk's `at`) to a subscriber's iterator,
 * status latency from the finalize's write (the status's `at`, stamped as it is published right
 * after) to a subscriber, chunks lost (a subscriber's chunks against the job's), and what the
 * messages and connection-minutes would cost on IoT Core (and an API Gateway WebSocket API).
 */
const JOBS = intEnv("BENCH_REALTIME_JOBS", 100, 1);
const WORDS = intEnv("BENCH_REALTIME_WORDS", 200, 1);
const SUBSCRIBERS = intEnv("BENCH_REALTIME_SUBSCRIBERS", 50, 1);
const DELAY_MS = intEnv("BENCH_REALTIME_DELAY_MS", 10, 0);
const DROP_AFTER = Math.max(1, Math.floor(WORDS / 4));
const TIMEOUT_MS = intEnv("BENCH_REALTIME_TIMEOUT_MS", 600_000, 1000);

interface Follower {
  chunks: number[];
  chunkLatencyMs: number[];
  statusLatencyMs: number[];
  messages: number;
  ended: boolean;
  reconnects: number;
}

/** Retries after a refused or lost connection, as a real subscriber would: from the last chunk seen. */
const RECONNECTS = 5;

async function follow(url: string, token: string, ready: () => void, dropAfter?: number): Promise<Follower> {
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

export async function realtimeScenario(): Promise<ScenarioOutcome> {
  const stack = await startLocalStack({ app, port: 0, autoTick: false });
  const api = (method: string, path: string, body?: unknown) =>
    fetch(`${stack.url}${path}`, {
      method,
      headers: { "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    }).then(async (r) => (await r.json()) as Record<string, unknown>);
  const text = Array.from({ length: WORDS }, (_, i) => `w${i + 1}`).join(" ");
  try {
    await api("POST", "/queues/default/pause");
    const ids: string[] = [];
    for (let i = 0; i < JOBS; i++) {
      const created = await api("POST", "/jobs", { kind: "llm-echo", payload: { text, delayMs: DELAY_MS } });
      ids.push(created.id as string);
    }
    const connected: Promise<void>[] = [];
    const followers: Promise<Follower>[] = [];
    for (const id of ids) {
      const { url, token } = (await api("POST", `/jobs/${id}/subscriptions`, {})) as {
        url: string;
        token: string;
      };
      for (let s = 0; s < SUBSCRIBERS; s++) {
        let ready!: () => void;
        connected.push(new Promise<void>((resolve) => (ready = resolve)));
        followers.push(follow(url, token, ready, s === 0 ? DROP_AFTER : undefined));
      }
    }
    await Promise.all(connected);
    const started = Date.now();
    await api("POST", "/queues/default/resume");
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`realtime: not every subscriber ended in ${TIMEOUT_MS} ms`)),
        TIMEOUT_MS,
      );
    });
    const results = await Promise.race([Promise.all(followers), timeout]).finally(() => clearTimeout(timer));
    const minutes = (Date.now() - started) / 60_000;
    const chunkMs = results.flatMap((r) => r.chunkLatencyMs).sort((a, b) => a - b);
    const statusMs = results.flatMap((r) => r.statusLatencyMs).sort((a, b) => a - b);
    const expected = Array.from({ length: WORDS }, (_, i) => i + 1).join(",");
    const lost = results.filter((r) => r.chunks.join(",") !== expected || !r.ended).length;
    const lostChunks = results.reduce((n, r) => n + Math.max(0, WORDS - new Set(r.chunks).size), 0);
    // On IoT Core each publish is a message in, each delivery a message out (chunks are ~60 B: one 5 KB unit).
    const published = JOBS * (WORDS + 1 + 3);
    // Each status (queued, running, done) is published again on its queue's topic, tailed by no one here.
    const messages = published * (1 + SUBSCRIBERS) + JOBS * 3;
    const iot = realtimePrices.iot;
    const gw = realtimePrices.apiGatewayWebSocket;
    const json = {
      realtimeJobs: JOBS,
      realtimeWords: WORDS,
      realtimeSubscribers: JOBS * SUBSCRIBERS,
      chunkLatencyMsP50: percentile(chunkMs, 50),
      chunkLatencyMsP99: percentile(chunkMs, 99),
      statusLatencyMsP50: percentile(statusMs, 50),
      statusLatencyMsP99: percentile(statusMs, 99),
      realtimeChunksLost: lostChunks,
      realtimeSubscribersWithGaps: lost,
      realtimeReconnects: results.reduce((n, r) => n + r.reconnects, 0),
      realtimeMessages: messages,
      realtimeSubscriberMinutes: round(minutes * JOBS * SUBSCRIBERS, 2),
      iotUsdPerMillionMessages: iot.usdPerMillionMessages,
      iotUsdPerMillionSubscriberMinutes: iot.usdPerMillionConnectionMinutes,
      apiGatewayWebSocketUsdPerMillionSubscriberMinutes: gw.usdPerMillionConnectionMinutes,
      realtimeRunUsdOnIot: round(
        (messages / 1e6) * iot.usdPerMillionMessages +
          ((minutes * JOBS * SUBSCRIBERS) / 1e6) * iot.usdPerMillionConnectionMinutes,
        4,
      ),
    };
    return {
      json,
      print: () => {
        console.log(`realtime: ${JOBS} llm-echo jobs × ${WORDS} words, ${SUBSCRIBERS} subscribers each`);
        console.log(
          `  chunk latency write → subscriber  p50 ${json.chunkLatencyMsP50} ms  p99 ${json.chunkLatencyMsP99} ms`,
        );
        console.log(
          `  status latency write → subscriber p50 ${json.statusLatencyMsP50} ms  p99 ${json.statusLatencyMsP99} ms`,
        );
        console.log(
          `  chunks lost ${lostChunks} (subscribers with a gap or no end: ${lost}; one per job dropped after ${DROP_AFTER} and resumed)`,
        );
        console.log(
          `  IoT Core: $${iot.usdPerMillionMessages}/M messages, $${iot.usdPerMillionConnectionMinutes}/M subscriber-minutes; this run ≈ $${json.realtimeRunUsdOnIot} (${messages} messages, ${json.realtimeSubscriberMinutes} subscriber-minutes)`,
        );
      },
      ...(lostChunks > 0 ? { failures: { realtime: `${lostChunks} chunks lost` } } : {}),
    };
  } finally {
    await stack.stop();
  }
}
