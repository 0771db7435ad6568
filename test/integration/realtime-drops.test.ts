import { describe, expect, it } from "vitest";
import { subscribe } from "../../client/realtime.ts";
import type { RealtimeEvent } from "../../lib/job/realtime-wire.ts";
import { localStackForFile } from "../support/stack-for-file.ts";
import { stackHttp } from "../support/stack-http.ts";
import { testApp } from "../support/test-app.ts";
import { withinMs } from "../support/wait.ts";

/**
 * What a subscriber misses when the stack drops a publish (docs/architecture.md §25): the publisher
 * here refuses every try of some chunks' messages, as a broker that keeps failing would, so the
 * publish queue drops them (counted); the subscriber still gets every chunk once, in order.
 */
const WORDS = 12;
/** The stream's messages the publisher refuses, by sequence number: each test sets its own. */
let dropped = new Set<number>();
let tries = 0;
const stack = localStackForFile({
  app: testApp(),
  wrapRealtimePublisher: (publisher) => ({
    publish: async (topic, payload) => {
      const event = JSON.parse(payload) as RealtimeEvent;
      if (event.type === "stream" && dropped.has(event.seq)) {
        tries += 1;
        throw new Error("the broker refused it");
      }
      return publisher.publish(topic, payload);
    },
  }),
});
const { call } = stackHttp(() => stack().url);

/** Runs an llm-echo job of WORDS words with `drop` refused; what its subscriber got. */
async function followWithDrops(drop: number[]) {
  dropped = new Set(drop);
  tries = 0;
  const before = stack().metrics.total("realtimeDropped");
  const text = Array.from({ length: WORDS }, (_, i) => `w${i + 1}`).join(" ");
  const created = await call("POST", "/jobs", { kind: "llm-echo", payload: { text, delayMs: 30 } });
  const { body } = await call("POST", `/jobs/${created.body.id}/subscriptions`, {});
  const chunks: [number, unknown][] = [];
  let last: RealtimeEvent | undefined;
  await withinMs(
    (async () => {
      for await (const event of subscribe({ url: body.url, token: body.token })) {
        if (event.type === "stream" && !event.closed) chunks.push([event.seq, event.chunk]);
        last = event;
      }
    })(),
    "the subscription's end",
    20_000,
  );
  expect(chunks).toEqual(Array.from({ length: WORDS }, (_, i) => [i + 1, `w${i + 1}`]));
  expect(last).toMatchObject({ type: "end", status: "done" });
  // Each dropped message was tried three times (the first and two retries), then counted.
  await stack().engine.realtime.drain();
  expect(tries).toBe(dropped.size * 3);
  expect(stack().metrics.total("realtimeDropped") - before).toBe(dropped.size);
}

describe("realtime: dropped publishes are read back by the subscriber", () => {
  it("a chunk whose next one shows the gap", () => followWithDrops([5]));
  it("the stream's last chunk and its close, missing when the job's end comes", () =>
    followWithDrops([WORDS, WORDS + 1]));
});
