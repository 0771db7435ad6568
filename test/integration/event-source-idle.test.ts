import { SendMessageBatchCommand } from "@aws-sdk/client-sqs";
import type { SQSBatchResponse } from "aws-lambda";
import { afterEach, expect, it } from "vitest";
import type { QueueDeclaration } from "../../lib/declarations/queue-declaration.ts";
import { silentLog } from "../../lib/observability/log.ts";
import { EventSourcePoller } from "../../local/event-source-poller.ts";
import { queueForFile } from "../support/sqs-queue.ts";
import { defaultQueue } from "../support/test-app.ts";
import { deferred, withinMs } from "../support/wait.ts";

/**
 * The local event source on an idle queue: one loop receives while the others wait, so an idle
 * stack doesn't send a long poll a loop a second; a receive that brings messages wakes them all, so
 * a burst still runs at the queue's concurrency.
 */
const declared: QueueDeclaration = { ...defaultQueue, name: "idle", batchWindowSeconds: 0 };
const CONCURRENCY = 4;
const fileQueue = queueForFile(declared, "esi");

let poller: EventSourcePoller | undefined;
afterEach(async () => {
  await poller?.stop();
  poller = undefined;
});

/** The receives in flight now, the most there were since `resetMost`, and a wait for the n-th to end. */
function receiveMeter(sqs: ReturnType<typeof fileQueue>["sqs"]) {
  let inFlight = 0;
  let most = 0;
  let ended = 0;
  const waiters: { at: number; done: () => void }[] = [];
  const name = `receive-meter-${Math.random()}`;
  sqs.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName !== "ReceiveMessageCommand") return next(args);
      most = Math.max(most, ++inFlight);
      try {
        return await next(args);
      } finally {
        inFlight--;
        ended++;
        for (const w of waiters.filter((w) => ended >= w.at)) w.done();
      }
    },
    { step: "initialize", name },
  );
  return {
    most: () => most,
    resetMost: () => {
      most = inFlight;
    },
    ended: () => ended,
    /** Resolves once `n` more receives have ended. */
    untilEnded(n: number): Promise<void> {
      const d = deferred();
      waiters.push({ at: ended + n, done: () => d.resolve() });
      return withinMs(d.promise, `${n} more receives`, 20_000);
    },
    remove: () => sqs.middlewareStack.remove(name),
  };
}

function startPoller(
  sqs: ReturnType<typeof fileQueue>["sqs"],
  url: string,
  handler: () => Promise<SQSBatchResponse>,
) {
  poller = new EventSourcePoller(sqs, {
    queueName: declared.name,
    queueUrl: url,
    queueArn: "arn:aws:sqs:us-east-1:000000000000:idle",
    batchSize: 1,
    batchWindowSeconds: 0,
    leaseSeconds: declared.leaseSeconds,
    maxConcurrency: CONCURRENCY,
    handler,
    log: silentLog,
  });
  poller.start();
}

it("an idle queue is watched by one receive at a time; a receive that brings work wakes every loop", async () => {
  const { sqs, queue } = fileQueue();
  const meter = receiveMeter(sqs);
  try {
    let running = 0;
    const allRunning = deferred();
    const release = deferred();
    startPoller(sqs, queue.url, async () => {
      if (++running === CONCURRENCY) allRunning.resolve();
      await release.promise;
      running--;
      return { batchItemFailures: [] };
    });
    // The first round: every loop receives once, all empty.
    await meter.untilEnded(CONCURRENCY);
    meter.resetMost();
    // Idle: three more empty long polls (a second each), never two at once.
    await meter.untilEnded(3);
    expect(meter.most()).toBe(1);

    // A burst of one message a loop: all run at once, though three loops were waiting.
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queue.url,
        Entries: Array.from({ length: CONCURRENCY }, (_, i) => ({ Id: `m${i}`, MessageBody: `{"i":${i}}` })),
      }),
    );
    await withinMs(allRunning.promise, `${CONCURRENCY} runs at once`, 20_000);
    release.resolve();
  } finally {
    meter.remove();
  }
});
