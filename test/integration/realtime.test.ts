import mqtt from "mqtt";
import { describe, expect, it } from "vitest";
import WebSocket from "ws";
import * as z from "zod";
import { app } from "../../app/index.ts";
import { subscribe } from "../../client/realtime.ts";
import {
  jobTopic,
  type RealtimeEvent,
  readTokenClaims,
  replayTopic,
  replyTopic,
} from "../../lib/job/realtime-wire.ts";
import { localStackForFile } from "../support/stack-for-file.ts";
import { type Json, stackHttp } from "../support/stack-http.ts";
import { testApp } from "../support/test-app.ts";
import { kindOnDefaultQueue } from "../support/test-kinds.ts";
import { deferred, waitFor, withinMs } from "../support/wait.ts";

/** Offsets the stack's clock, so a token's expiry is reached without waiting for it. */
let clockOffsetMs = 0;

const badChunks = kindOnDefaultQueue(
  "bad-chunks",
  { maxAttempts: 1, timeoutSeconds: 30 },
  async (_p, ctx) => {
    const errors: string[] = [];
    const out = ctx.stream("out");
    for (const attempt of [() => out.write("x".repeat(33 * 1024)), () => ctx.stream("").write("y")]) {
      await Promise.resolve()
        .then(attempt)
        .catch((err: unknown) => errors.push(String(err)));
    }
    await out.write("fine");
    await out.close();
    return { errors };
  },
);

/** Opened by the test once its raw subscriber listens, so it sees every message of the run. */
let sleepyGate = Promise.resolve();
const sleepyStream = kindOnDefaultQueue(
  "sleepy-stream",
  { maxAttempts: 3, timeoutSeconds: 30, payload: z.object({}) },
  async (_p, ctx) => {
    await sleepyGate;
    const out = ctx.stream("log");
    await ctx.step("greet", async () => "hi");
    await out.write("before");
    await ctx.sleep("nap", 1);
    await out.write("after");
    await out.close();
    return "slept";
  },
);

const stack = localStackForFile({
  app: testApp({ kinds: [...app.kinds, badChunks, sleepyStream] }),
  clock: { now: () => Date.now() + clockOffsetMs },
});
const { call, untilStatus } = stackHttp(() => stack().url);

async function enqueue(kind: string, payload: unknown): Promise<string> {
  const created = await call("POST", "/jobs", { kind, payload });
  expect(created.status).toBe(201);
  return created.body.id as string;
}

async function subscription(id: string, body: unknown = {}): Promise<Json> {
  const answer = await call("POST", `/jobs/${id}/subscriptions`, body);
  expect(answer.status).toBe(201);
  return answer.body;
}

/** Every event until the iterator ends (after `end`), bounded. */
async function collect(events: AsyncIterable<RealtimeEvent>, stopAfter?: number): Promise<RealtimeEvent[]> {
  const out: RealtimeEvent[] = [];
  const run = async () => {
    for await (const event of events) {
      out.push(event);
      if (stopAfter !== undefined && out.filter((e) => e.type === "stream").length >= stopAfter) break;
    }
    return out;
  };
  return withinMs(run(), "the subscription's events", 20_000);
}

const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i + 1}`).join(" ");
const chunksOf = (events: RealtimeEvent[]) =>
  events.flatMap((e) => (e.type === "stream" && !e.closed ? [[e.seq, e.chunk]] : []));

/** Connects a raw MQTT client with `token`; resolves with the client, or rejects with the refusal. */
function rawConnect(url: string, token: string): Promise<mqtt.MqttClient> {
  return new Promise((resolve, reject) => {
    const client = mqtt.connect(url, {
      clientId: `raw-${Math.random().toString(16).slice(2)}`,
      username: "token",
      password: token,
      reconnectPeriod: 0,
    });
    client.once("connect", () => resolve(client));
    client.once("error", (err) => {
      client.end(true);
      reject(err);
    });
  });
}

describe("realtime on the local stack", () => {
  it("pushes an llm-echo job's status, its words in order, then its end", async () => {
    const id = await enqueue("llm-echo", { text: words(20), delayMs: 5 });
    const { url, token, expiresAt } = await subscription(id);
    expect(url).toBe(stack().realtimeUrl);
    expect(Date.parse(expiresAt)).toBeGreaterThan(Date.now());
    const events = await collect(subscribe({ url, token }));
    expect(chunksOf(events)).toEqual(Array.from({ length: 20 }, (_, i) => [i + 1, `w${i + 1}`]));
    expect(events.at(-2)).toMatchObject({ type: "status", status: "done", result: { chunks: 20 } });
    expect(events.at(-1)).toEqual({ type: "end", jobId: id, status: "done" });
    expect(events.every((e) => e.jobId === id)).toBe(true);
  });

  it("ends a subscription when its queued job is cancelled through the API", async () => {
    const created = await call("POST", "/jobs", { kind: "echo", payload: 1, delaySeconds: 600 });
    const id = created.body.id as string;
    const { url, token } = await subscription(id);
    const events: RealtimeEvent[] = [];
    const following = (async () => {
      for await (const event of subscribe({ url, token })) events.push(event);
    })();
    // Once it read back the job's status (queued), the cancel comes live.
    await waitFor(async () => events.length > 0, "the subscriber's first event", 10_000);
    expect((await call("POST", `/jobs/${id}/cancel`)).body.cancel).toBe("cancelled");
    await withinMs(following, "the subscription's end", 10_000);
    expect(events.map((e) => [e.type, "status" in e ? e.status : undefined])).toEqual([
      ["status", "queued"],
      ["status", "cancelled"],
      ["end", "cancelled"],
    ]);
  });

  it("resumes a subscriber that dropped mid-stream with `from`: every chunk once, in order", async () => {
    const id = await enqueue("llm-echo", { text: words(40), delayMs: 20 });
    const { url, token } = await subscription(id);
    const first = await collect(subscribe({ url, token }), 7);
    const seen = chunksOf(first);
    const lastSeq = seen.at(-1)?.[0] as number;
    const rest = await collect(subscribe({ url, token, from: lastSeq }));
    expect([...seen, ...chunksOf(rest)]).toEqual(Array.from({ length: 40 }, (_, i) => [i + 1, `w${i + 1}`]));
    expect(rest.at(-1)).toMatchObject({ type: "end", status: "done" });
  });

  it("gives a token for job A no event of job B, and refuses B's topic", async () => {
    const a = await enqueue("llm-echo", { text: words(10), delayMs: 10 });
    const b = await enqueue("llm-echo", { text: words(10), delayMs: 10 });
    const { url, token } = await subscription(a);
    const raw = await rawConnect(url, token);
    for (const topic of [jobTopic("skyforge/local", b), "skyforge/local/jobs/+", "#"])
      await expect(raw.subscribeAsync(topic)).rejects.toThrow(/Subscribe error/);
    expect((await raw.subscribeAsync(jobTopic("skyforge/local", a))).map((g) => g.qos)).toEqual([0]);
    raw.end(true);
    const events = await collect(subscribe({ url, token }));
    expect(events.every((e) => e.jobId === a)).toBe(true);
    await untilStatus(b, "done");
  });

  it("refuses an altered or expired token at connect, and a token's publish to its job's topic", async () => {
    const id = await enqueue("echo", { n: 1 });
    const { url, token } = await subscription(id, { expiresInSeconds: 300 });
    const claims = readTokenClaims(token);
    expect(claims && "j" in claims ? claims.j : undefined).toBe(id);
    const [body, signature] = token.split(".") as [string, string];
    const forged = `${Buffer.from(JSON.stringify({ ...claims, j: "01ARZ3NDEKTSV4RRFFQ69G5FAV" })).toString("base64url")}.${signature}`;
    const flipped = `${body}.${signature.slice(0, -2)}${signature.endsWith("AA") ? "BB" : "AA"}`;
    for (const bad of [forged, flipped, "not-a-token"])
      await expect(rawConnect(url, bad)).rejects.toThrow(/Bad username or password/);
    clockOffsetMs = 301_000;
    try {
      await expect(rawConnect(url, token)).rejects.toThrow(/Bad username or password/);
    } finally {
      clockOffsetMs = 0;
    }
    const raw = await rawConnect(url, token);
    const closed = new Promise<void>((resolve) => raw.once("close", () => resolve()));
    raw.publish(jobTopic("skyforge/local", id), JSON.stringify({ type: "status", status: "done" }));
    await withinMs(closed, "the broker to close a forbidden publisher", 10_000);
    raw.end(true);
  });

  it("answers one replay request of a connection at a time: a flood costs one read", async () => {
    const id = await enqueue("llm-echo", { text: words(5) });
    await untilStatus(id, "done");
    const { url, token } = await subscription(id);
    const clientId = `flood-${Math.random().toString(16).slice(2)}`;
    const raw = await new Promise<mqtt.MqttClient>((resolve, reject) => {
      const c = mqtt.connect(url, { clientId, username: "token", password: token, reconnectPeriod: 0 });
      c.once("connect", () => resolve(c)).once("error", reject);
    });
    const markers: unknown[] = [];
    raw.on("message", (_t, payload) => {
      const message = JSON.parse(payload.toString()) as { type: string };
      if (message.type === "replayed") markers.push(message);
    });
    await raw.subscribeAsync(replyTopic("skyforge/local", id, clientId));
    const ask = replayTopic("skyforge/local", id, clientId);
    for (let i = 0; i < 20; i++) raw.publish(ask, JSON.stringify({ id: `r${i}`, from: 0 }));
    await waitFor(async () => markers.length > 0, "the first replay's end", 10_000);
    // One more, after the first was answered, is answered too: the bound is on requests in flight.
    raw.publish(ask, JSON.stringify({ id: "later", from: 0 }));
    await waitFor(async () => markers.length > 1, "the later replay's end", 10_000);
    raw.end(true);
    expect(markers).toEqual([
      { type: "replayed", id: "r0" },
      { type: "replayed", id: "later" },
    ]);
  });

  it("closes a connection that sends anything but MQTT", async () => {
    const socket = new WebSocket(stack().realtimeUrl, "mqtt");
    await new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject));
    const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
    socket.send("GET /jobs HTTP/1.1\r\n\r\n");
    await withinMs(closed, "the broker to close a non-MQTT connection", 10_000);
  });

  it("answers 404 for an unknown job and 400 for a `from` that is not a number", async () => {
    expect((await call("POST", "/jobs/01ARZ3NDEKTSV4RRFFQ69G5FAV/subscriptions", {})).status).toBe(404);
    const id = await enqueue("echo", { n: 2 });
    for (const bad of [{ from: "abc" }, { from: -1 }, { group: "yes" }, { other: 1 }])
      expect((await call("POST", `/jobs/${id}/subscriptions`, bad)).body.error.code).toBe("validation_error");
    expect((await call("POST", `/jobs/${id}/subscriptions?from=abc`, {})).status).toBe(400);
    expect((await call("POST", `/jobs/${id}/subscriptions?from=3`, {})).status).toBe(201);
  });

  it("throws a clear error for a chunk over 32 KiB or a bad stream name, and the run goes on", async () => {
    const id = await enqueue("bad-chunks", {});
    const { url, token } = await subscription(id);
    const events = await collect(subscribe({ url, token }));
    const done = await untilStatus(id, "done");
    expect(done.result.errors).toEqual([
      expect.stringMatching(
        /UsageError: ctx.stream\("out"\).write: a chunk is \d+ bytes once serialized, over 32768/,
      ),
      expect.stringMatching(/UsageError: ctx.stream: a stream name must be a non-empty string/),
    ]);
    expect(chunksOf(events)).toEqual([[1, "fine"]]);
  });

  it("keeps a durable job's stream across its replay: a chunk before a sleep is written once", async () => {
    const gate = deferred();
    sleepyGate = gate.promise;
    const id = await enqueue("sleepy-stream", {});
    const { url, token } = await subscription(id);
    // What the stack publishes, as sent: a chunk published again after the replay would show here.
    const raw = await rawConnect(url, token);
    const sent: unknown[] = [];
    raw.on("message", (_topic, payload) => sent.push(JSON.parse(payload.toString())));
    await raw.subscribeAsync(jobTopic("skyforge/local", id));
    gate.resolve();
    const events = await collect(subscribe({ url, token }));
    raw.end(true);
    expect(sent.filter((e) => (e as RealtimeEvent).type === "stream")).toMatchObject([
      { seq: 1, chunk: "before" },
      { seq: 2, chunk: "after" },
      { seq: 3, closed: true },
    ]);
    expect(chunksOf(events)).toEqual([
      [1, "before"],
      [2, "after"],
    ]);
    expect(events.some((e) => e.type === "status" && e.status === "scheduled" && e.waiting)).toBe(true);
    expect(events.filter((e) => e.type === "step")).toMatchObject([{ step: "greet" }, { step: "nap" }]);
    // A late subscriber reads the same two chunks back: none was stored twice.
    const late = await collect(subscribe({ url, token }));
    expect(chunksOf(late)).toEqual(chunksOf(events));
  });
});
