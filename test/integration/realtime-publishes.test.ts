import mqtt from "mqtt";
import { afterAll, describe, expect, it } from "vitest";
import * as z from "zod";
import { app } from "../../app/index.ts";
import { tailQueue } from "../../client/realtime.ts";
import { groupTopic, jobTopic, type StatusEvent } from "../../lib/job/realtime-wire.ts";
import { localStackForFile } from "../support/stack-for-file.ts";
import { stackHttp } from "../support/stack-http.ts";
import { testApp } from "../support/test-app.ts";
import { kindOnDefaultQueue } from "../support/test-kinds.ts";
import { deferred, waitFor, withinMs } from "../support/wait.ts";

/**
 * The publishes made outside a run (docs/architecture.md §25): the enqueue's own `queued`, an
 * operator's retry of a dead job and resume of a paused one (`queued` again), a group's progress
 * on its topic, and a queue token's tail of every status of its queue's jobs, held by the broker to its
 * queue's topic alone.
 */
let failing = true;
const flaky = (name: string, onExhausted: "dead" | "pause") =>
  kindOnDefaultQueue(name, { maxAttempts: 1, timeoutSeconds: 30, onExhausted }, async () => {
    if (failing) throw new Error("not yet");
    return "fine";
  });
/** One gate per child (its payload's `n`), so the children end one after the other. */
const gates = [deferred(), deferred()];
const gated = kindOnDefaultQueue(
  "gated-child",
  { maxAttempts: 1, timeoutSeconds: 30, payload: z.object({ n: z.number().int() }) },
  async ({ n }) => {
    await gates[n]?.promise;
    return "through";
  },
);

const stack = localStackForFile({
  app: testApp({ kinds: [...app.kinds, flaky("dies-once", "dead"), flaky("pauses-once", "pause"), gated] }),
});
const { call, untilStatus } = stackHttp(() => stack().url);
const PREFIX = "skyforge/local";
const clients: mqtt.MqttClient[] = [];
afterAll(() => {
  for (const c of clients) c.end(true);
});

/** A raw MQTT connection with `token`, closed after the file. */
async function connect(url: string, token: string): Promise<mqtt.MqttClient> {
  const client = await new Promise<mqtt.MqttClient>((resolve, reject) => {
    const c = mqtt.connect(url, {
      clientId: `raw-${Math.random().toString(16).slice(2)}`,
      username: "token",
      password: token,
      reconnectPeriod: 0,
    });
    c.once("connect", () => resolve(c)).once("error", reject);
  });
  clients.push(client);
  return client;
}

/** A raw MQTT connection with `token` on `topic`, keeping each message it receives, parsed. */
async function listen(url: string, token: string, topic: string): Promise<Record<string, unknown>[]> {
  const client = await connect(url, token);
  const seen: Record<string, unknown>[] = [];
  client.on("message", (_t, payload) => seen.push(JSON.parse(payload.toString())));
  const granted = await client.subscribeAsync(topic);
  expect(granted.map((g) => g.qos)).toEqual([0]);
  return seen;
}

async function jobToken(id: string, body: unknown = {}) {
  const answer = await call("POST", `/jobs/${id}/subscriptions`, body);
  expect(answer.status).toBe(201);
  return answer.body as { url: string; token: string };
}

const statusesOf = (events: Record<string, unknown>[], id: string) =>
  events.filter((e) => e.type === "status" && e.jobId === id).map((e) => e.status);

describe("realtime publishes outside a run", () => {
  it("a queue's tail gets a new job's queued (the enqueue's own), running and done", async () => {
    const minted = await call("POST", "/queues/default/subscriptions", { expiresInSeconds: 300 });
    expect(minted.status).toBe(201);
    const stop = new AbortController();
    const events: StatusEvent[] = [];
    const tailing = (async () => {
      for await (const event of tailQueue({ ...minted.body, signal: stop.signal } as never))
        events.push(event);
    })();
    // The tail starts when it has subscribed: enqueue until one of ours is seen queued.
    const ids: string[] = [];
    await waitFor(
      async () => {
        ids.push(
          (await call("POST", "/jobs", { kind: "echo", payload: { n: ids.length } })).body.id as string,
        );
        return events.some((e) => ids.includes(e.jobId) && e.status === "queued");
      },
      "the tail's first queued job",
      10_000,
      200,
    );
    const id = ids.find((i) => events.some((e) => e.jobId === i && e.status === "queued")) as string;
    await waitFor(
      async () => statusesOf(events, id).includes("done"),
      `job ${id}'s done on the tail`,
      10_000,
    );
    expect(statusesOf(events, id)).toEqual(["queued", "running", "done"]);
    stop.abort();
    await withinMs(tailing, "the tail's end after its abort", 5_000);
  });

  it("the broker holds a queue token to its queue's topic: no job's, no other queue's; a job token to no queue's", async () => {
    const minted = (await call("POST", "/queues/default/subscriptions", {})).body as {
      url: string;
      token: string;
    };
    const id = (await call("POST", "/jobs", { kind: "echo", payload: { n: "scoped" } })).body.id as string;
    const raw = await connect(minted.url, minted.token);
    for (const topic of [jobTopic(PREFIX, id), `${PREFIX}/queues/batch`, `${PREFIX}/queues/+`, "#"])
      await expect(raw.subscribeAsync(topic), topic).rejects.toThrow(/Subscribe error/);
    expect((await raw.subscribeAsync(`${PREFIX}/queues/default`)).map((g) => g.qos)).toEqual([0]);
    const job = await jobToken(id);
    const jobRaw = await connect(job.url, job.token);
    await expect(jobRaw.subscribeAsync(`${PREFIX}/queues/default`)).rejects.toThrow(/Subscribe error/);
    // A queue token publishes nothing: the broker closes a connection that tries.
    const closed = new Promise<void>((resolve) => raw.once("close", () => resolve()));
    raw.publish(`${PREFIX}/queues/default`, JSON.stringify({ type: "status", jobId: id, status: "done" }));
    await withinMs(closed, "the broker to close a queue token's publish", 10_000);
  });

  it("answers 404 for an undeclared queue's token and 400 for a bad body", async () => {
    expect((await call("POST", "/queues/nope/subscriptions", {})).status).toBe(404);
    expect((await call("POST", "/queues/default/subscriptions", { from: 3 })).status).toBe(400);
    expect((await call("POST", "/queues/default/subscriptions", { expiresInSeconds: 1 })).status).toBe(400);
  });

  it("an operator's retry of a dead job and resume of a paused one each publish queued", async () => {
    failing = true;
    const dies = (await call("POST", "/jobs", { kind: "dies-once", payload: {} })).body.id as string;
    const pauses = (await call("POST", "/jobs", { kind: "pauses-once", payload: {} })).body.id as string;
    await untilStatus(dies, "dead");
    await untilStatus(pauses, "paused");
    failing = false;
    const dead = await jobToken(dies);
    const paused = await jobToken(pauses);
    const onDead = await listen(dead.url, dead.token, jobTopic(PREFIX, dies));
    const onPaused = await listen(paused.url, paused.token, jobTopic(PREFIX, pauses));
    expect((await call("POST", `/jobs/${dies}/retry`)).status).toBe(200);
    expect((await call("POST", `/jobs/${pauses}/resume`)).status).toBe(200);
    await untilStatus(dies, "done");
    await untilStatus(pauses, "done");
    await waitFor(async () => statusesOf(onDead, dies).includes("done"), "the retried job's done", 10_000);
    await waitFor(
      async () => statusesOf(onPaused, pauses).includes("done"),
      "the resumed job's done",
      10_000,
    );
    expect(statusesOf(onDead, dies)).toEqual(["queued", "running", "done"]);
    expect(statusesOf(onPaused, pauses)).toEqual(["queued", "running", "done"]);
  });

  it("a group publishes its slice's counts on its topic as each child's end is recorded (one slice: the group's)", async () => {
    const created = await call("POST", "/groups", {
      children: [0, 1].map((n) => ({ kind: "gated-child", payload: { n } })),
      onComplete: { kind: "echo", payload: {} },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const groupId = created.body.id as string;
    const children = (await call("GET", `/groups/${groupId}/children`)).body.items as { id: string }[];
    const first = children[0]?.id as string;
    const { url, token } = await jobToken(first, { group: true });
    const onGroup = await listen(url, token, groupTopic(PREFIX, groupId));
    const progress = () => onGroup.filter((e) => e.type === "group");
    gates[0]?.resolve();
    await waitFor(
      async () => progress().some((e) => (e.counts as { done: number }).done === 1),
      "the group's first progress",
      10_000,
    );
    gates[1]?.resolve();
    await waitFor(
      async () => progress().some((e) => (e.counts as { done: number }).done === 2),
      "the group's last progress",
      10_000,
    );
    const counts = progress().map((e) => e.counts);
    expect(counts[0]).toEqual({ total: 2, pending: 1, done: 1, dead: 0, cancelled: 0 });
    expect(counts.at(-1)).toEqual({ total: 2, pending: 0, done: 2, dead: 0, cancelled: 0 });
    expect(
      progress().every(
        (e) => e.groupId === groupId && e.slice === 0 && children.some((c) => c.id === e.jobId),
      ),
    ).toBe(true);
  });
});
