import { performance } from "node:perf_hooks";
import type { LocalStack } from "../local/stack.ts";
import { BATCH, sleep } from "./bench-config.ts";

/** What one bench enqueue produced: every job's id, which of them were new, and each call's wall time. */
export interface Enqueued {
  ids: string[];
  /** Jobs created; a uniqueKey repeat answered with the live job's id is not one. */
  created: number;
  callMs: number[];
}

/**
 * Enqueues `requests` through the engine's batch producer, BATCH (100) a call as the API takes them,
 * timing each call. A refused entry is an error: `refusal` words it (the bench's own error type).
 */
export async function enqueueTimed(
  stack: LocalStack,
  requests: readonly unknown[],
  refusal: (error: unknown) => Error = (error) => new Error(`enqueue refused: ${JSON.stringify(error)}`),
): Promise<Enqueued> {
  const out: Enqueued = { ids: [], created: 0, callMs: [] };
  for (let start = 0; start < requests.length; start += BATCH) {
    const t = performance.now();
    const results = await stack.engine.producer.enqueueBatch(requests.slice(start, start + BATCH));
    out.callMs.push(performance.now() - t);
    for (const r of results) {
      if (!r.id) throw refusal(r.error);
      out.ids.push(r.id);
      if (!r.duplicate) out.created += 1;
    }
  }
  return out;
}

/**
 * Turns a queue's event source off so a backlog can build, and waits for the receives in flight
 * (each a second of long polling at most) to come back empty, so no message of the backlog is
 * received and handed back while the source is off. Only the source: a queue pause would have the
 * worker put off, with a delay, what the source received before it stopped. Returns the switch back on.
 */
export async function holdEventSource(
  stack: LocalStack,
  queue: string,
  maxConcurrency: number,
): Promise<{ resume(): Promise<void> }> {
  const source = (enabled: boolean) => stack.eventSources.apply(queue, { enabled, maxConcurrency });
  await source(false);
  await sleep(1500);
  return { resume: () => source(true) };
}
