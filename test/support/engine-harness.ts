import { ReceiveMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";
import type { SQSEvent } from "aws-lambda";
import { afterEach } from "vitest";
import type { Clock } from "../../lib/clock.ts";
import type { EventDeclaration } from "../../lib/declarations/event-declaration.ts";
import type { QueueDeclaration } from "../../lib/declarations/queue-declaration.ts";
import { buildEngine, openDurableRun } from "../../lib/engine.ts";
import type { JournalLimits } from "../../lib/job/journal-bounds.ts";
import type { AnyKind } from "../../lib/job/kind.ts";
import { type Log, silentLog } from "../../lib/observability/log.ts";
import { MemoryMetrics } from "../../lib/observability/metrics.ts";
import { createWorker } from "../../lib/runtime/worker.ts";
import type { Engine } from "../../lib/services/engine-services.ts";
import type { JobItem } from "../../lib/store/job-item.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import type { Emulators, ProvisionedQueue } from "../../local/emulators.ts";
import { EventSourcePoller, toSqsRecord } from "../../local/event-source-poller.ts";
import { defaultQueue, testApp } from "./test-app.ts";
import { emulatorsForFile, engineWiring, freshResources } from "./test-emulators.ts";
import { waitFor } from "./wait.ts";

const TEST_QUEUE_ARN = "arn:aws:sqs:us-east-1:000000000000:test";

export interface HarnessOptions {
  clock: Clock;
  queue?: Partial<QueueDeclaration>;
  extraKinds?: AnyKind[];
  visibilityTimeoutSeconds?: number;
  random?: () => number;
  /** Where the engine logs (silent by default). */
  log?: Log;
  /** Durable jobs' journal bounds, when a test plays the caps at a smaller size. */
  journalLimits?: JournalLimits;
  /** The app's event declarations (their lookbacks); none by default. */
  events?: EventDeclaration[];
}

export interface Harness {
  engine: Engine;
  /** The harness's own SQS client, for what a test sends or reads around the engine (a DLQ message, a purge). */
  sqs: SQSClient;
  metrics: MemoryMetrics;
  queue: QueueDeclaration;
  urls: ProvisionedQueue;
  worker: ReturnType<typeof createWorker>;
  /** Receives up to `max` messages as Lambda would and builds the event, without invoking anything. */
  receive(max?: number, waitSeconds?: number): Promise<SQSEvent>;
  startPoller(): EventSourcePoller;
  stop(): Promise<void>;
}

/** A fresh table and queue pair (unique names) on the shared emulators, wired like production. */
export async function createHarness(emu: Emulators, options: HarnessOptions): Promise<Harness> {
  const queue: QueueDeclaration = { ...defaultQueue, ...options.queue };
  const fresh = await freshResources(
    emu,
    [queue],
    { table: "jobs", queues: "t", bucket: "claims" },
    options.visibilityTimeoutSeconds !== undefined
      ? { visibilityTimeoutSeconds: options.visibilityTimeoutSeconds }
      : {},
  );
  const wiring = engineWiring(fresh);
  const { sqs } = wiring;
  const urls = fresh.queues.get(queue.name) as ProvisionedQueue;
  const metrics = new MemoryMetrics();
  const app = testApp({
    queues: [queue],
    kinds: [...testApp().kinds, ...(options.extraKinds ?? [])],
    ...(options.events ? { events: options.events } : {}),
  });
  const engine = buildEngine({
    durableRuns: openDurableRun,
    app,
    poolKinds: [],
    ...wiring,
    clock: options.clock,
    metrics,
    log: options.log ?? silentLog,
    ...(options.random ? { random: options.random } : {}),
    ...(options.journalLimits ? { journalLimits: options.journalLimits } : {}),
  });
  const worker = createWorker(engine, { recordConcurrency: queue.recordConcurrency });
  const pollers: EventSourcePoller[] = [];
  return {
    engine,
    sqs,
    metrics,
    queue,
    urls,
    worker,
    async receive(max = 10, waitSeconds = 5) {
      const out = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: urls.url,
          MaxNumberOfMessages: max,
          WaitTimeSeconds: waitSeconds,
          MessageSystemAttributeNames: ["All"],
        }),
      );
      return { Records: (out.Messages ?? []).map((m) => toSqsRecord(m, TEST_QUEUE_ARN)) };
    },
    startPoller() {
      const poller = new EventSourcePoller(sqs, {
        queueName: queue.name,
        queueUrl: urls.url,
        queueArn: TEST_QUEUE_ARN,
        batchSize: queue.batchSize,
        batchWindowSeconds: 1,
        leaseSeconds: queue.leaseSeconds,
        maxConcurrency: 2,
        handler: worker,
        log: silentLog,
      });
      poller.start();
      pollers.push(poller);
      return poller;
    },
    async stop() {
      for (const p of pollers) await p.stop();
      fresh.destroy();
    },
  };
}

/** Resolves with the job once it reaches `status` (bounded by waitFor's timeout, or `timeoutMs`). */
export const settled = (harness: Harness, id: string, status: JobItem["status"], timeoutMs?: number) =>
  waitFor(
    async () => {
      const item = await getJob(harness.engine.store, id);
      return item?.status === status ? item : undefined;
    },
    `job ${id} to be ${status}`,
    timeoutMs,
  );

/**
 * Emulators for the whole file, a fresh harness per test, everything stopped afterwards. `emulators`
 * lets a test wire a second consumer (its own clients) to the same table and queues.
 */
export function harnessPerTest(): {
  create(options: HarnessOptions): Promise<Harness>;
  emulators(): Emulators;
} {
  const emulators = emulatorsForFile();
  let current: Harness | undefined;
  afterEach(async () => {
    await current?.stop();
    current = undefined;
  });
  return {
    create: async (options) => {
      current = await createHarness(emulators(), options);
      return current;
    },
    emulators,
  };
}
