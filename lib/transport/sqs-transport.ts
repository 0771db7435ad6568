import {
  ChangeMessageVisibilityBatchCommand,
  ChangeMessageVisibilityCommand,
  DeleteMessageBatchCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { ConfigError } from "../errors.ts";
import { MAX_DELAY_SECONDS, MAX_VISIBILITY_SECONDS } from "../limits.ts";
import { encodeMessageBody } from "./job-message.ts";
import { chunkForBatch, fairGroup, type OutgoingJob, SQS_BATCH } from "./outgoing-messages.ts";

/** One message's new visibility, in a ChangeMessageVisibilityBatch; `id` is the caller's name for it. */
export interface VisibilityChange {
  id: string;
  receiptHandle: string;
  seconds: number;
}

/** An entry SQS did not apply (or a request that failed as a whole, for each of its entries). */
export interface VisibilityFailure {
  id: string;
  code: string;
  message: string;
}

/** A queue's main SQS queue or its dead-letter queue. */
export type QueueSide = "main" | "dlq";

/** SQS's approximate counts for one queue (and its DLQ). */
export interface QueueDepth {
  visible: number;
  inFlight: number;
  delayed: number;
  dlq: number;
}

/** Thin SQS adapter keyed by queue name; urls come from config, never from the environment. */
export class SqsTransport {
  private readonly sqs: SQSClient;
  private readonly urls: ReadonlyMap<string, string>;
  private readonly dlqUrls: ReadonlyMap<string, string>;

  constructor(
    sqs: SQSClient,
    urls: ReadonlyMap<string, string>,
    dlqUrls: ReadonlyMap<string, string> = new Map(),
  ) {
    this.sqs = sqs;
    this.urls = urls;
    this.dlqUrls = dlqUrls;
  }

  urlOf(queue: string, side: QueueSide = "main"): string {
    const url = (side === "main" ? this.urls : this.dlqUrls).get(queue);
    if (!url) throw new ConfigError(`no SQS ${side} url configured for queue ${queue}`);
    return url;
  }

  hasDlq(queue: string): boolean {
    return this.dlqUrls.has(queue);
  }

  async send(job: OutgoingJob): Promise<void> {
    await this.sqs.send(
      new SendMessageCommand({
        QueueUrl: this.urlOf(job.message.queue),
        MessageBody: encodeMessageBody(job.message),
        DelaySeconds: clampDelay(job.delaySeconds),
        ...fairGroup(job.message),
      }),
    );
  }

  /**
   * Sends many jobs with SendMessageBatch, grouped by queue, ten per request and never more bytes
   * than SQS takes in one batch (large payloads ride in the message, so a few can fill it).
   * result: the ids SQS refused (the caller reports them as failed; nothing is written for them).
   */
  async sendBatch(jobs: readonly OutgoingJob[]): Promise<Set<string>> {
    const failed = new Set<string>();
    const byQueue = Map.groupBy(jobs, (j) => j.message.queue);
    const requests: Promise<void>[] = [];
    for (const [queue, list] of byQueue) {
      for (const chunk of chunkForBatch(list)) {
        requests.push(
          this.sqs
            .send(
              new SendMessageBatchCommand({
                QueueUrl: this.urlOf(queue),
                Entries: chunk.map((j) => ({
                  Id: j.message.id,
                  MessageBody: j.body,
                  DelaySeconds: clampDelay(j.delaySeconds),
                  ...fairGroup(j.message),
                })),
              }),
            )
            .then(
              (out) => {
                for (const f of out.Failed ?? []) if (f.Id) failed.add(f.Id);
              },
              () => {
                for (const j of chunk) failed.add(j.message.id);
              },
            ),
        );
      }
    }
    await Promise.all(requests);
    return failed;
  }

  async changeVisibility(
    queue: string,
    receiptHandle: string,
    seconds: number,
    side: QueueSide = "main",
  ): Promise<void> {
    await this.sqs.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: this.urlOf(queue, side),
        ReceiptHandle: receiptHandle,
        VisibilityTimeout: Math.max(0, Math.min(MAX_VISIBILITY_SECONDS, Math.ceil(seconds))),
      }),
    );
  }

  /**
   * Sets many messages' visibility with ChangeMessageVisibilityBatch, ten entries per request (one
   * request for a batch SQS handed out). result: the entries SQS did not apply, by the caller's id;
   * a request that failed as a whole reports each of its entries.
   */
  async changeVisibilityBatch(
    queue: string,
    changes: readonly VisibilityChange[],
    side: QueueSide = "main",
  ): Promise<VisibilityFailure[]> {
    const failures: VisibilityFailure[] = [];
    const requests: Promise<void>[] = [];
    for (let start = 0; start < changes.length; start += SQS_BATCH) {
      const chunk = changes.slice(start, start + SQS_BATCH);
      // Entry ids are positions: a caller's id (a message id, say) need not fit SQS's id rules.
      const request = this.sqs
        .send(
          new ChangeMessageVisibilityBatchCommand({
            QueueUrl: this.urlOf(queue, side),
            Entries: chunk.map((c, i) => ({
              Id: String(i),
              ReceiptHandle: c.receiptHandle,
              VisibilityTimeout: clampVisibility(c.seconds),
            })),
          }),
        )
        .then(
          (out) => {
            for (const f of out.Failed ?? []) {
              const change = chunk[Number(f.Id)];
              if (change)
                failures.push({ id: change.id, code: f.Code ?? "unknown", message: f.Message ?? "" });
            }
          },
          (err: unknown) => {
            const code = err instanceof Error ? err.name : "unknown";
            const message = err instanceof Error ? err.message : String(err);
            for (const c of chunk) failures.push({ id: c.id, code, message });
          },
        );
      requests.push(request);
    }
    await Promise.all(requests);
    return failures;
  }

  async delete(queue: string, receiptHandle: string, side: QueueSide = "main"): Promise<void> {
    await this.sqs.send(
      new DeleteMessageCommand({ QueueUrl: this.urlOf(queue, side), ReceiptHandle: receiptHandle }),
    );
  }

  /**
   * Deletes many messages, ten per DeleteMessageBatch request (a pool batch call's items). result:
   * how many SQS did not delete; those come back and are dropped as duplicates of finished jobs.
   */
  async deleteBatch(queue: string, receiptHandles: readonly string[]): Promise<number> {
    const requests: Promise<number>[] = [];
    for (let start = 0; start < receiptHandles.length; start += SQS_BATCH) {
      const chunk = receiptHandles.slice(start, start + SQS_BATCH);
      requests.push(
        this.sqs
          .send(
            new DeleteMessageBatchCommand({
              QueueUrl: this.urlOf(queue, "main"),
              Entries: chunk.map((receiptHandle, i) => ({ Id: String(i), ReceiptHandle: receiptHandle })),
            }),
          )
          .then(
            (out) => out.Failed?.length ?? 0,
            () => chunk.length,
          ),
      );
    }
    const failed = await Promise.all(requests);
    return failed.reduce((a, b) => a + b, 0);
  }

  /** `visibilitySeconds` overrides the queue's visibility timeout for the messages received. */
  async receive(
    queue: string,
    max: number,
    waitSeconds: number,
    side: QueueSide = "main",
    visibilitySeconds?: number,
  ): Promise<Message[]> {
    const out = await this.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: this.urlOf(queue, side),
        MaxNumberOfMessages: Math.min(SQS_BATCH, max),
        WaitTimeSeconds: waitSeconds,
        ...(visibilitySeconds !== undefined ? { VisibilityTimeout: visibilitySeconds } : {}),
        MessageSystemAttributeNames: ["ApproximateReceiveCount", "SentTimestamp"],
      }),
    );
    return out.Messages ?? [];
  }

  /** Approximate counts: two GetQueueAttributes calls (main + DLQ), free of charge beyond the request. */
  async depth(queue: string): Promise<QueueDepth> {
    return (await this.inspect(queue)).depth;
  }

  /**
   * The counts, and the visibility timeout SQS has for the queue (what a takeover waits for when a
   * worker dies before its hold), from the same two requests.
   */
  async inspect(queue: string): Promise<{ depth: QueueDepth; visibilityTimeoutSeconds: number }> {
    const read = async (side: QueueSide) => {
      const out = await this.sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: this.urlOf(queue, side),
          AttributeNames: [
            "ApproximateNumberOfMessages",
            "ApproximateNumberOfMessagesNotVisible",
            "ApproximateNumberOfMessagesDelayed",
            "VisibilityTimeout",
          ],
        }),
      );
      const a = out.Attributes ?? {};
      return {
        visible: Number(a.ApproximateNumberOfMessages ?? 0),
        inFlight: Number(a.ApproximateNumberOfMessagesNotVisible ?? 0),
        delayed: Number(a.ApproximateNumberOfMessagesDelayed ?? 0),
        visibilityTimeoutSeconds: Number(a.VisibilityTimeout ?? Number.NaN),
      };
    };
    const [main, dlq] = await Promise.all([
      read("main"),
      this.hasDlq(queue) ? read("dlq") : Promise.resolve(undefined),
    ]);
    const { visibilityTimeoutSeconds, ...counts } = main;
    return {
      depth: { ...counts, dlq: dlq ? dlq.visible + dlq.inFlight + dlq.delayed : 0 },
      visibilityTimeoutSeconds,
    };
  }
}

function clampVisibility(seconds: number): number {
  return Math.max(0, Math.min(MAX_VISIBILITY_SECONDS, Math.ceil(seconds)));
}

function clampDelay(seconds: number): number {
  return Math.max(0, Math.min(MAX_DELAY_SECONDS, Math.ceil(seconds)));
}
