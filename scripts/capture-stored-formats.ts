import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { app } from "../app/index.ts";
import { takeCallPermit } from "../lib/store/batch-key-ops.ts";
import { moveHealCursor, readHealCursor } from "../lib/store/flow-heal-cursor-ops.ts";
import { acquireLease } from "../lib/store/schedule-ops.ts";
import { STORED_FORMATS } from "../lib/store/stored-formats.ts";
import { startLocalStack } from "../local/stack.ts";
import { claimObjects, scanTable, type TableItem, writeFixtureSet } from "./stored-format-files.ts";

/**
 * Captures today's stored formats as fixtures (docs/architecture.md §24): starts the local stack in
 * memory over the demo app, runs its kinds until every stored format has been written by the code
 * itself (a plain job done, a large payload's item and claims objects, a queued job and its
 * message, durable jobs waiting on an event, on a token and on a race (after parallel steps and a
 * child job) with recorded steps, an event kept for its lookback, a flow key with a
 * parked job, a job of several flow limits parked in its second limit's line, a batch, a debounced and a singleton job, a group, a schedule, a rate bucket...),
 * then writes the table's items (DynamoDB JSON, one file per format), the message bodies the stack
 * sent, the claims bucket's objects and a manifest naming the jobs each check uses into
 * test/fixtures/stored-formats/<set>/. test/integration/stored-formats.test.ts reads them with the
 * current code. A set once committed is kept as it is: a later version captures a new set.
 *
 *   npx tsx scripts/capture-stored-formats.ts [--set v1] [--force]
 */

const delayOf = (m: { DelaySeconds?: number }) => (m.DelaySeconds ? { delaySeconds: m.DelaySeconds } : {});

const USAGE = "usage: npx tsx scripts/capture-stored-formats.ts [--set v<N>] [--force]";
let args: { set: string; force: boolean };
try {
  const { values } = parseArgs({
    options: { set: { type: "string", default: "v1" }, force: { type: "boolean", default: false } },
  });
  args = { set: values.set, force: values.force };
  if (!/^v\d+$/.test(args.set)) throw new Error(`--set must be v<N>, got "${args.set}"`);
} catch (err) {
  console.error(`${(err as Error).message}\n${USAGE}`);
  process.exit(2);
}

const ROOT = resolve(fileURLToPath(new URL("..", import.meta.url)));
const OUT = join(ROOT, "test", "fixtures", "stored-formats", args.set);
if (existsSync(OUT) && !args.force) {
  console.error(
    `${relative(ROOT, OUT)} exists: a committed set is kept as it is (--force to capture it again)`,
  );
  process.exit(2);
}

/** Each SQS message body the stack sends, with its queue url and delay. */
const sent: { queueUrl: string; body: string; delaySeconds?: number }[] = [];

type Entry = { MessageBody?: string; DelaySeconds?: number };
const stack = await startLocalStack({
  app,
  port: 0,
  autoTick: false,
  instrument: ({ sqs }) => {
    sqs.middlewareStack.add(
      (next, context) => async (call) => {
        const input = call.input as {
          QueueUrl?: string;
          MessageBody?: string;
          DelaySeconds?: number;
          Entries?: Entry[];
        };
        const queueUrl = input.QueueUrl ?? "";
        if (context.commandName === "SendMessageCommand" && input.MessageBody !== undefined)
          sent.push({ queueUrl, body: input.MessageBody, ...delayOf(input) });
        if (context.commandName === "SendMessageBatchCommand")
          for (const e of input.Entries ?? [])
            if (e.MessageBody !== undefined) sent.push({ queueUrl, body: e.MessageBody, ...delayOf(e) });
        return next(call);
      },
      { step: "initialize", name: "capture-messages" },
    );
  },
});

// biome-ignore lint/suspicious/noExplicitAny: answers are read field by field.
type Json = Record<string, any>;

async function call(method: string, path: string, body?: unknown): Promise<Json> {
  const res = await fetch(`${stack.url}${path}`, {
    method,
    headers: { "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const answer = (await res.json()) as Json;
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(answer)}`);
  return answer;
}

const enqueue = async (request: Json): Promise<string> => (await call("POST", "/jobs", request)).id;

/** Polls the job until `ready` holds for its view (60 s at most: every kind here ends within seconds). */
async function until(id: string, what: string, ready: (job: Json) => boolean): Promise<Json> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const job = await call("GET", `/jobs/${id}`);
    if (ready(job)) return job;
    if (Date.now() > deadline)
      throw new Error(`job ${id} (${job.kind}) never ${what}: ${JSON.stringify(job)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
const untilStatus = (id: string, status: string) => until(id, `became ${status}`, (j) => j.status === status);

try {
  // Jobs that end on their own, all at once.
  const plain = await enqueue({ kind: "echo", payload: { hello: "world" } });
  const largePayload = await enqueue({ kind: "echo", payload: { pad: "p".repeat(1024) } });
  const claimChecked = await enqueue({ kind: "echo", payload: { pad: "c".repeat(9 * 1024) } });
  const unique = await enqueue({ kind: "echo", payload: { unique: true }, uniqueKey: "capture-unique" });
  const scheduled = await enqueue({ kind: "echo", payload: { later: true }, delaySeconds: 7200 });
  const cancelled = await enqueue({ kind: "echo", payload: { cancel: true }, delaySeconds: 7200 });
  const dead = await enqueue({ kind: "fail", payload: { message: "captured failure" }, maxAttempts: 1 });
  const retried = await enqueue({ kind: "flaky", payload: { failTimes: 1 } });
  const paused = await enqueue({ kind: "import-row", payload: { line: "not a row" } });
  const rated = await enqueue({ kind: "partner-call", payload: { orderId: "capture-order" } });
  const flowRated = await enqueue({ kind: "tenant-rate", payload: { tenant: "capture-rate" } });
  const batched = await enqueue({ kind: "batch-echo", payload: { key: "capture-key", value: 1 } });
  const debounced = await enqueue({ kind: "doc-index", payload: { doc: "capture-doc", rev: 1 } });
  const collected = await enqueue({ kind: "doc-digest", payload: { doc: "capture-doc", rev: 1 } });
  const singleton = await enqueue({ kind: "doc-sync", payload: { doc: "capture-doc", rev: 1 } });
  const fanOut = await enqueue({ kind: "score-all", payload: { rows: 3 } });
  // Tags (from v4): kept on the job item and its message, and an entry per tag in the tag index.
  const tagged = await enqueue({ kind: "echo", payload: { tagged: true }, tags: ["capture", "tenant:acme"] });
  // Priorities 1..5 (from v5): a number kept on the job item and its message, as given.
  const prioritized = await enqueue({ kind: "echo", payload: { prioritized: true }, priority: 4 });
  const eventWait = await enqueue({ kind: "order-flow", payload: { order: "capture-order" } });
  const tokenWait = await enqueue({ kind: "onboard", payload: { user: "capture-user", sleepSeconds: 1 } });
  // A race (order-saga: parallel steps, an echo child with its parent, then order.shipped against a
  // 30 s timer): the job waits for any, its event branch's waiter names its branch.
  const raceWait = await enqueue({ kind: "order-saga", payload: { order: "capture-saga", items: 2 } });
  // An event no wait takes yet, kept for its lookback.
  await call("POST", "/events", { name: "order.paid", match: "capture-kept", data: { kept: true } });
  await call("POST", `/jobs/${cancelled}/cancel`);
  await call("PATCH", "/queues/batch", { maxConcurrency: 5 });

  for (const id of [
    plain,
    largePayload,
    claimChecked,
    unique,
    retried,
    rated,
    flowRated,
    tagged,
    prioritized,
  ])
    await untilStatus(id, "done");
  for (const id of [batched, debounced, collected, singleton]) await untilStatus(id, "done");
  await untilStatus(dead, "dead");
  await untilStatus(paused, "paused");
  const group = (await untilStatus(fanOut, "done")).result.groupId as string;
  const groupDone = await waitGroup(group);
  const completion = groupDone.completionJobId as string;
  await untilStatus(completion, "done");
  const waitingFor = (kind: string) => (j: Json) => j.status === "scheduled" && j.waiting?.for === kind;
  await until(eventWait, "waited for its event", waitingFor("event"));
  await until(tokenWait, "waited for its token", waitingFor("token"));
  await until(raceWait, "waited for its race", waitingFor("any"));

  // A flow key's places: tenant-echo runs 2 at once for this tenant, so the third job parks.
  const tenant = "capture-tenant";
  const holders = [
    await enqueue({ kind: "tenant-echo", payload: { tenant, sleepMs: 10_000 } }),
    await enqueue({ kind: "tenant-echo", payload: { tenant, sleepMs: 10_000 } }),
  ];
  for (const id of holders) await untilStatus(id, "running");
  const parked = await enqueue({ kind: "tenant-echo", payload: { tenant, sleepMs: 10_000 } });
  await until(parked, "parked", (j) => j.waitingForKey === true);
  // Several flow limits (from v3): tenant-report runs 1 job of a user at once, so a second report of
  // the user parks in its `user` limit's line, holding its other limits' keys and its `llm` cost.
  const report = { tenant: "capture-tenant", user: "capture-user", sleepMs: 10_000 };
  const reportRunning = await enqueue({ kind: "tenant-report", payload: { ...report, tokens: 1200 } });
  await untilStatus(reportRunning, "running");
  const reportParked = await enqueue({ kind: "tenant-report", payload: { ...report, tokens: 800 } });
  await until(reportParked, "parked", (j) => j.waitingForKey === true);

  // The scheduled functions once (reaper, cleanup, cron), as a minute's tick runs them.
  await stack.ticker.tick();

  // Items only a rarer path writes, written by the store operations those paths call: a batch
  // call's permit (no demo kind declares maxKeyConcurrency), the cron runner's lease (a tick
  // releases it at its end), the flow heal's cursor (moved when a run runs out of time).
  const store = stack.engine.store;
  const now = Date.now();
  await takeCallPermit(
    store,
    "batch-echo",
    "capture-key",
    0,
    randomBytes(12).toString("base64url"),
    now + 60_000,
  );
  await acquireLease(store, "cron", `capture-${process.pid}`, 60_000);
  await moveHealCursor(store, await readHealCursor(store), { shard: 3, after: "tenant-echo#capture" }, now);

  // A queued job and its message, last: the default queue's poller stops (its recorded state
  // untouched, and no tick follows to repair it), so the message stays in SQS, the item queued.
  await stack.eventSources.apply("default", { enabled: false, maxConcurrency: 10 });
  const queued = await enqueue({ kind: "echo", payload: { queued: "with its message" } });
  await untilStatus(queued, "queued");

  const items = await scanTable(stack);
  const capturedAt = Date.now();
  const urls = new Map([...stack.queues].map(([name, q]) => [q.url, name] as const));
  const messages = sent.map(({ queueUrl, body, delaySeconds }) => ({
    queue: urls.get(queueUrl) ?? queueUrl,
    ...(delaySeconds ? { delaySeconds } : {}),
    body,
  }));
  if (!messages.some((m) => (JSON.parse(m.body) as Json).id === queued))
    throw new Error(`no message was sent for the queued job ${queued}`);
  const claims = await claimObjects(stack);
  const manifest = {
    capturedAt,
    versions: STORED_FORMATS,
    jobs: {
      ...{ plain, largePayload, claimChecked, unique, scheduled, cancelled, dead, retried, paused },
      ...{ rated, flowRated, batched, debounced, collected, singleton, fanOut, parked, queued },
      ...{ reportRunning, reportParked, tagged, prioritized },
    },
    event: { job: eventWait, event: "order.paid", match: "capture-order" },
    token: { job: tokenWait, ...tokenOf(items, tokenWait) },
    race: { job: raceWait, event: "order.shipped", match: "capture-saga" },
    flowKey: { kind: "tenant-echo", key: tenant, holders },
    group: { id: group, completion },
  };
  const counts = await writeFixtureSet(OUT, { items, messages, claims, manifest });
  console.log(
    `captured into ${relative(ROOT, OUT)}: ${[...counts].map(([f, n]) => `${f} ${n}`).join(", ")}; ` +
      `${messages.length} messages, ${claims.length} claims objects`,
  );
} finally {
  await stack.stop();
}

async function waitGroup(id: string): Promise<Json> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const g = await call("GET", `/groups/${id}`);
    if (g.completionJobId !== undefined) return g;
    if (Date.now() > deadline) throw new Error(`group ${id} never completed: ${JSON.stringify(g)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A token's id and url, from the token step its job recorded. */
function tokenOf(items: TableItem[], jobId: string): Json {
  const job = items.find((i) => i.pk?.S === `job#${jobId}` && i.sk?.S === "job");
  const step = job?.steps?.M?.approval?.M?.v?.S;
  if (!step) throw new Error(`job ${jobId} has no recorded token step`);
  return JSON.parse(step) as Json;
}
