import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import type { SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import { errorFields, type Log } from "../lib/observability/log.ts";
import { holdSeconds } from "../lib/runtime/unstarted-messages.ts";

export interface PollerOptions {
  queueName: string;
  queueUrl: string;
  queueArn: string;
  /** Records per invocation, ≤ 10 (one ReceiveMessage). */
  batchSize: number;
  /** Long-poll wait used to gather a batch, like the ESM's batching window. */
  batchWindowSeconds: number;
  /** Concurrent invocations, like ESM maximum concurrency. */
  maxConcurrency: number;
  /** The queue's lease: a received message stays hidden for the batching window plus one hold. */
  leaseSeconds: number;
  handler: (event: SQSEvent) => Promise<SQSBatchResponse>;
  log: Log;
}

/**
 * What Lambda's SQS event source mapping does, in process: `maxConcurrency` loops each receive a
 * batch, invoke the handler, and delete the records it did not report as failed. Failed records are
 * left alone, so they come back when their visibility (set by the worker) lapses. Like a mapping, it
 * can be disabled (nothing is received, so nothing is dead-lettered) and its concurrency changed.
 *
 * Every receive asks for a visibility that covers the batching window plus one hold (a lease and a
 * second), the way the pool receives, not the queue's: if the whole stack dies between a receive and
 * the worker's own hold (a batch still gathering, a handler not yet at its first line), the messages
 * come back within that bound after the restart instead of the queue's visibility timeout
 * (6 × the worker timeout). Once the worker runs, its hold and heartbeats keep them hidden.
 */
export class EventSourcePoller {
  private running = false;
  private enabled = true;
  /** Retired: what a receive still brings is handed back, for the poller that replaced this one. */
  private retired = false;
  private concurrency: number;
  private readonly loops = new Map<number, Promise<void>>();
  private readonly abort = new AbortController();
  /** Resolved (and replaced) whenever the configuration changes, to wake loops waiting on a pause. */
  private changed = Promise.withResolvers<void>();
  /** Resolved (and replaced) whenever a receive brings messages, to wake the loops idling meanwhile. */
  private found = Promise.withResolvers<void>();
  /** Loops in a receive now: a loop whose receive came back empty waits only while another receives. */
  private receiving = 0;

  private readonly sqs: SQSClient;
  private readonly options: PollerOptions;

  constructor(sqs: SQSClient, options: PollerOptions) {
    this.sqs = sqs;
    this.options = options;
    this.concurrency = options.maxConcurrency;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.spawnLoops();
  }

  /** UpdateEventSourceMapping, locally: Enabled and ScalingConfig.MaximumConcurrency. */
  configure(intent: { enabled: boolean; maxConcurrency: number }): void {
    this.enabled = intent.enabled;
    this.concurrency = intent.maxConcurrency;
    this.notify();
    if (this.running) this.spawnLoops();
  }

  describe(): { enabled: boolean; maxConcurrency: number } {
    return { enabled: this.enabled, maxConcurrency: this.concurrency };
  }

  async stop(): Promise<void> {
    this.running = false;
    this.abort.abort();
    this.notify();
    await Promise.allSettled(this.loops.values());
    this.loops.clear();
  }

  /**
   * Stops receiving, as a reload replaces this poller with another on the same queue, without
   * cutting the receive in flight: aborted, it would leave the emulator a long poll nobody reads,
   * which takes the next message and hides it for the receive's visibility. What it brings is
   * handed back at once, for the new poller; the runs going finish on this poller's handler.
   */
  async retire(): Promise<void> {
    this.retired = true;
    this.running = false;
    this.notify();
    await Promise.allSettled(this.loops.values());
    this.loops.clear();
  }

  private notify(): void {
    this.changed.resolve();
    this.changed = Promise.withResolvers<void>();
  }

  private spawnLoops(): void {
    for (let i = 0; i < this.concurrency; i++) {
      if (this.loops.has(i)) continue;
      this.loops.set(
        i,
        this.loop(i).finally(() => this.loops.delete(i)),
      );
    }
  }

  private async loop(index: number): Promise<void> {
    // Loops above the concurrency end; a raise spawns new ones.
    while (this.running && index < this.concurrency) {
      if (!this.enabled) {
        await this.changed.promise;
        continue;
      }
      try {
        this.receiving++;
        const messages = await this.receive().finally(() => this.receiving--);
        if (messages.length === 0) {
          // An empty queue is watched by one loop: the others wait until a receive brings work
          // (Lambda's pollers scale down the same way), while one still receives. Every loop
          // polling an idle queue every second cost an idle stack 2-3% of a core.
          if (this.receiving > 0) await Promise.race([this.found.promise, this.changed.promise]);
          continue;
        }
        this.found.resolve();
        this.found = Promise.withResolvers<void>();
        // Disabled or retired during the long poll: hand the batch straight back instead of running it.
        if (!this.enabled || this.retired) await this.release(messages);
        else await this.invoke(messages);
      } catch (err) {
        if (!this.running) return;
        this.options.log.error("event source poll failed; backing off", {
          queue: this.options.queueName,
          ...errorFields(err),
        });
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }

  /**
   * One batch, as Lambda's event source gathers it: a long poll, then, for a batch size over one
   * receive's 10, more receives until the batch is full or the batching window since the first
   * message has passed.
   */
  private async receive(): Promise<Message[]> {
    const { batchSize, batchWindowSeconds } = this.options;
    const first = await this.receiveUpTo(
      Math.min(10, batchSize),
      Math.max(1, Math.min(20, Math.ceil(batchWindowSeconds))),
    );
    if (batchSize <= 10 || first.length === 0) return first;
    const batch = [...first];
    const until = Date.now() + batchWindowSeconds * 1000;
    while (batch.length < batchSize && this.running) {
      const left = until - Date.now();
      if (left <= 0) break;
      // Short waits, so the window's end is kept to within a second.
      batch.push(
        ...(await this.receiveUpTo(
          Math.min(10, batchSize - batch.length),
          Math.min(1, Math.ceil(left / 1000)),
        )),
      );
    }
    return batch;
  }

  private async receiveUpTo(max: number, waitSeconds: number): Promise<Message[]> {
    const out = await this.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: this.options.queueUrl,
        MaxNumberOfMessages: max,
        WaitTimeSeconds: waitSeconds,
        VisibilityTimeout: receiveVisibilitySeconds(this.options),
        MessageSystemAttributeNames: ["All"],
      }),
      { abortSignal: this.abort.signal },
    );
    return out.Messages ?? [];
  }

  /**
   * Hands a batch received after a pause back at once. An entry SQS does not apply would stay hidden
   * for the queue's whole visibility timeout (90 min), so it is tried once more and then logged.
   */
  private async release(messages: Message[], retry = true): Promise<void> {
    if (messages.length > 10) {
      for (let i = 0; i < messages.length; i += 10) await this.release(messages.slice(i, i + 10), retry);
      return;
    }
    const out = await this.sqs.send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: this.options.queueUrl,
        Entries: messages.map((m, i) => ({
          Id: String(i),
          ReceiptHandle: m.ReceiptHandle as string,
          VisibilityTimeout: 0,
        })),
      }),
    );
    const failed = (out.Failed ?? []).map((f) => ({ message: messages[Number(f.Id)], code: f.Code }));
    if (failed.length === 0) return;
    if (retry) {
      await this.release(
        failed.flatMap((f) => (f.message ? [f.message] : [])),
        false,
      );
      return;
    }
    this.options.log.error("could not hand paused messages back; they return after the visibility timeout", {
      queue: this.options.queueName,
      failures: failed.map((f) => ({ messageId: f.message?.MessageId, code: f.code })),
    });
  }

  /** Handler invocations so far: one per batch, however many receives gathered it. */
  invocations = 0;

  private async invoke(messages: Message[]): Promise<void> {
    this.invocations += 1;
    const event: SQSEvent = { Records: messages.map((m) => toSqsRecord(m, this.options.queueArn)) };
    let failed: Set<string>;
    try {
      const response = await this.options.handler(event);
      failed = new Set((response?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
    } catch (err) {
      // A thrown handler fails the whole batch, exactly as Lambda treats it.
      this.options.log.error("worker invocation failed", {
        queue: this.options.queueName,
        ...errorFields(err),
      });
      return;
    }
    const done = messages.filter((m) => !failed.has(m.MessageId as string));
    // Ten entries a request, SQS's bound.
    for (let i = 0; i < done.length; i += 10) {
      await this.sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: this.options.queueUrl,
          Entries: done
            .slice(i, i + 10)
            .map((m, j) => ({ Id: String(j), ReceiptHandle: m.ReceiptHandle as string })),
        }),
      );
    }
  }
}

/** How long a receive hides its messages: the batching window, then one hold for the worker to take over. */
export function receiveVisibilitySeconds(q: { batchWindowSeconds: number; leaseSeconds: number }): number {
  return Math.ceil(q.batchWindowSeconds) + holdSeconds(q.leaseSeconds * 1000);
}

/** A received message in the shape Lambda hands an SQS-triggered function. */
export function toSqsRecord(m: Message, queueArn: string): SQSRecord {
  const a = m.Attributes ?? {};
  return {
    messageId: m.MessageId as string,
    receiptHandle: m.ReceiptHandle as string,
    body: m.Body ?? "",
    attributes: {
      ApproximateReceiveCount: a.ApproximateReceiveCount ?? "1",
      SentTimestamp: a.SentTimestamp ?? String(Date.now()),
      SenderId: a.SenderId ?? "local",
      ApproximateFirstReceiveTimestamp: a.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
    },
    messageAttributes: {},
    md5OfBody: m.MD5OfBody ?? "",
    eventSource: "aws:sqs",
    eventSourceARN: queueArn,
    awsRegion: "us-east-1",
  };
}
