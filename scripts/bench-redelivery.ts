import { performance } from "node:perf_hooks";
import {
  ChangeMessageVisibilityBatchCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SQSClient,
} from "@aws-sdk/client-sqs";
import { app } from "../app/index.ts";
import { RequestMeter } from "../bench/request-meter.ts";
import { silentLog } from "../lib/observability/log.ts";
import { LOCAL_AWS } from "../local/emulators.ts";
import { type LocalStack, startLocalStack } from "../local/stack.ts";
import { ASSUMED_ENQUEUE_CALL_MS, intEnv, payload, round, sleep, TIMEOUT_MS } from "./bench-config.ts";
import { enqueueTimed, holdEventSource } from "./bench-enqueue.ts";
import { costPerUnit, meteredUsage } from "./bench-usage.ts";

/**
 * The redelivery scenario of `npm run bench` (docs/architecture.md §6, "The crash window"): what a
 * message handed out again costs, the price of a queue visibility shorter than AWS's advised
 * 6 × the worker timeout. A backlog of REDELIVERY_JOBS echo jobs on queue `default`, enqueued while
 * its event source is off, is drained three ways, each metered from the enqueue on:
 * - `once`: every message delivered once (the baseline);
 * - `lapsed`: every message received once first, its visibility left to lapse, then delivered, as a
 *   batch whose throttled invocation never ran comes back to the mapping;
 * - `twice`: every message delivered twice, both copies run by the worker, as a throttled invocation
 *   that runs after the mapping handed its batch out again (the copies are sent unmetered: on AWS
 *   they are the same message received again).
 */
export const REDELIVERY_JOBS = intEnv("BENCH_REDELIVERY_JOBS", 1000, 100);
const QUEUE = "default";
const KIND = "echo";
type Mode = "once" | "lapsed" | "twice";
/** Long enough for one pass of receives over the backlog, so each message is received once. */
const LAPSE_SECONDS = 5;
/** The queue's lease here: a copy that finds its job running comes back when that lease ends. */
const LEASE_SECONDS = 3;

/** Receives every message of the queue once (`want` of them), hiding each for `hideSeconds`. */
async function receiveAll(sqs: SQSClient, url: string, want: number, hideSeconds: number) {
  const seen = new Map<string, Message>();
  const deadline = performance.now() + TIMEOUT_MS;
  while (seen.size < want) {
    if (performance.now() > deadline) throw new Error(`redelivery scenario: ${seen.size}/${want} received`);
    const out = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: url,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 1,
        VisibilityTimeout: hideSeconds,
      }),
    );
    for (const m of out.Messages ?? []) seen.set(m.MessageId as string, m);
  }
  return [...seen.values()];
}

async function queueEmpty(sqs: SQSClient, url: string): Promise<boolean> {
  const out = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: url,
      AttributeNames: [
        "ApproximateNumberOfMessages",
        "ApproximateNumberOfMessagesNotVisible",
        "ApproximateNumberOfMessagesDelayed",
      ],
    }),
  );
  return Object.values(out.Attributes ?? {}).every((v) => v === "0");
}

async function drain(stack: LocalStack, meter: RequestMeter, side: SQSClient, mode: Mode, seqBase: number) {
  const url = stack.queues.get(QUEUE)?.url as string;
  const source = await holdEventSource(stack, QUEUE, 10);
  const succeededBefore = stack.metrics.total("succeeded");
  meter.reset();
  const requests = Array.from({ length: REDELIVERY_JOBS }, (_, i) => ({
    kind: KIND,
    payload: payload(seqBase + i, 256),
  }));
  const { callMs } = await enqueueTimed(
    stack,
    requests,
    () => new Error("redelivery scenario: an enqueue was refused"),
  );
  if (mode === "lapsed") {
    // Metered: the mapping's receives of batches whose invocations never ran.
    await receiveAll(stack.clients.sqs, url, REDELIVERY_JOBS, LAPSE_SECONDS);
    await sleep(LAPSE_SECONDS * 1000 + 500);
  } else if (mode === "twice") {
    // Unmetered: the second copy of each message stands for the same message received again.
    const messages = await receiveAll(side, url, REDELIVERY_JOBS, 30);
    for (let i = 0; i < messages.length; i += 10) {
      const ten = messages.slice(i, i + 10);
      await side.send(
        new SendMessageBatchCommand({
          QueueUrl: url,
          Entries: ten.map((m, j) => ({ Id: String(j), MessageBody: m.Body as string })),
        }),
      );
      await side.send(
        new ChangeMessageVisibilityBatchCommand({
          QueueUrl: url,
          Entries: ten.map((m, j) => ({
            Id: String(j),
            ReceiptHandle: m.ReceiptHandle as string,
            VisibilityTimeout: 0,
          })),
        }),
      );
    }
  }
  const invocationsBefore = stack.eventSources.invocations(QUEUE);
  await source.resume();
  // Until every job is done and every copy settled: a copy that met its job running is put off until
  // that run's lease ends, then deleted.
  const deadline = performance.now() + TIMEOUT_MS;
  while (
    stack.metrics.total("succeeded") < succeededBefore + REDELIVERY_JOBS ||
    !(await queueEmpty(side, url))
  ) {
    if (performance.now() > deadline) throw new Error(`redelivery scenario (${mode}): timed out`);
    await sleep(100);
  }
  const m = meteredUsage(
    meter.snapshot(),
    { callMs, assumedMs: callMs.map(() => ASSUMED_ENQUEUE_CALL_MS) },
    stack.eventSources.invocations(QUEUE) - invocationsBefore,
  );
  const priced = costPerUnit(m, REDELIVERY_JOBS);
  return {
    wcuPerJob: m.wcu / REDELIVERY_JOBS,
    sqsPerJob: m.sqsBilled / REDELIVERY_JOBS,
    usdPerMillionJobs: priced.cost.usdPerMillionJobs,
  };
}

export async function runRedeliveryScenario() {
  const meter = new RequestMeter();
  const stack = await startLocalStack({
    // A short lease keeps the drain short; an echo run is far shorter, so no heartbeat is paid.
    app: {
      ...app,
      queues: app.queues.map((q) => (q.name === QUEUE ? { ...q, leaseSeconds: LEASE_SECONDS } : q)),
    },
    port: 0,
    log: silentLog,
    autoTick: false,
    instrument: (clients) => meter.attachAll(clients),
  });
  const side = new SQSClient({ ...LOCAL_AWS, endpoint: stack.endpoints.sqs });
  try {
    // A warm-up drain, unreported: the first requests of each code path.
    await drain(stack, meter, side, "once", 8_000_000);
    const once = await drain(stack, meter, side, "once", 8_100_000);
    const lapsed = await drain(stack, meter, side, "lapsed", 8_200_000);
    const twice = await drain(stack, meter, side, "twice", 8_300_000);
    const extra = (r: typeof once) => r.usdPerMillionJobs - once.usdPerMillionJobs;
    return {
      jobs: REDELIVERY_JOBS,
      once,
      lapsed,
      twice,
      /** What one million messages handed out again add, per way. */
      usdPerMillionLapsed: extra(lapsed),
      usdPerMillionRunTwice: extra(twice),
    };
  } finally {
    side.destroy();
    await stack.stop();
  }
}

export type RedeliveryRun = Awaited<ReturnType<typeof runRedeliveryScenario>>;

export const redeliveryJson = (r: RedeliveryRun) => ({
  jobs: r.jobs,
  usdPerMillionJobs: {
    once: round(r.once.usdPerMillionJobs, 4),
    lapsed: round(r.lapsed.usdPerMillionJobs, 4),
    twice: round(r.twice.usdPerMillionJobs, 4),
  },
  wcuPerJob: {
    once: round(r.once.wcuPerJob, 4),
    lapsed: round(r.lapsed.wcuPerJob, 4),
    twice: round(r.twice.wcuPerJob, 4),
  },
  sqsPerJob: {
    once: round(r.once.sqsPerJob, 4),
    lapsed: round(r.lapsed.sqsPerJob, 4),
    twice: round(r.twice.sqsPerJob, 4),
  },
});

export function printRedeliveryTable(r: RedeliveryRun): void {
  const row = (name: string, x: RedeliveryRun["once"]) =>
    [
      name,
      `$${x.usdPerMillionJobs.toFixed(4)}/M  wcu ${round(x.wcuPerJob, 4)}  sqs ${round(x.sqsPerJob, 4)} per job`,
    ] as [string, string];
  const rows: [string, string][] = [
    ["jobs", `${r.jobs} of ${KIND} on ${QUEUE}, a backlog drained three ways`],
    row("delivered once", r.once),
    row("received, lapsed, delivered", r.lapsed),
    row("delivered twice, both run", r.twice),
    [
      "a redelivery adds",
      `$${r.usdPerMillionLapsed.toFixed(4)}/M when the first never ran; $${r.usdPerMillionRunTwice.toFixed(4)}/M when both run`,
    ],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  console.log("\nskyforge bench: redelivery scenario (the price of a shorter queue visibility), local stack");
  for (const [k, v] of rows) console.log(`  ${k.padEnd(width)}  ${v}`);
}
