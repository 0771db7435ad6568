import { app } from "../app/index.ts";
import { realtimePrices } from "../bench/prices.ts";
import { startLocalStack } from "../local/stack.ts";
import type { ScenarioOutcome } from "./bench-all.ts";
import { intEnv, percentile, round } from "./bench-config.ts";
import { type SubscriberTarget, startSubscribers } from "./bench-realtime-subscribers.ts";

/**
 * The realtime scenario (`npm run bench -- --scenario realtime`; docs/architecture.md §25): JOBS
 * `llm-echo` jobs of WORDS words each, SUBSCRIBERS subscribers per job on the local stack, one of
 * them per job dropping after DROP_AFTER chunks and resuming with `from`, all in a worker thread of
 * their own (scripts/bench-realtime-subscribers.ts). The queue is paused while
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
    const targets: SubscriberTarget[] = [];
    for (const id of ids) {
      const { url, token } = (await api("POST", `/jobs/${id}/subscriptions`, {})) as {
        url: string;
        token: string;
      };
      for (let s = 0; s < SUBSCRIBERS; s++)
        targets.push({ url, token, ...(s === 0 ? { dropAfter: DROP_AFTER } : {}) });
    }
    const subscribers = startSubscribers(targets);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`realtime: not every subscriber ended in ${TIMEOUT_MS} ms`)),
        TIMEOUT_MS,
      );
    });
    let started = 0;
    const results = await Promise.race([
      subscribers.connected.then(async () => {
        started = Date.now();
        await api("POST", "/queues/default/resume");
        return subscribers.followers;
      }),
      timeout,
    ]).finally(() => {
      clearTimeout(timer);
      void subscribers.stop();
    });
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
