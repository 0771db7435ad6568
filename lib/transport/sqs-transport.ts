import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { MAX_NATIVE_DELAY_SECONDS } from "../job/schemas.ts";
import type { JobMessage } from "./job-message.ts";

/** SQS caps a message's visibility at 12 hours. */
export const MAX_VISIBILITY_SECONDS = 12 * 3600;
const SQS_BATCH = 10;

export interface OutgoingJob {
  message: JobMessage;
  delaySeconds: number;
}

/** Thin SQS adapter keyed by queue name; urls come from config, never from the environment. */
export class SqsTransport {
  constructor(
    private readonly sqs: SQSClient,
    private readonly urls: ReadonlyMap<string, string>,
  ) {}

  urlOf(queue: string): string {
    const url = this.urls.get(queue);
    if (!url) throw new Error(`no SQS url configured for queue ${queue}`);
    return url;
  }

  async send(job: OutgoingJob): Promise<void> {
    await this.sqs.send(
      new SendMessageCommand({
        QueueUrl: this.urlOf(job.message.queue),
        MessageBody: JSON.stringify(job.message),
        DelaySeconds: clampDelay(job.delaySeconds),
      }),
    );
  }

  /**
   * Sends many jobs with SendMessageBatch, ten per request, grouped by queue.
   * result: the ids SQS refused (the caller reports them as failed; nothing is written for them).
   */
  async sendBatch(jobs: readonly OutgoingJob[]): Promise<Set<string>> {
    const failed = new Set<string>();
    const byQueue = Map.groupBy(jobs, (j) => j.message.queue);
    const requests: Promise<void>[] = [];
    for (const [queue, list] of byQueue) {
      for (let i = 0; i < list.length; i += SQS_BATCH) {
        const chunk = list.slice(i, i + SQS_BATCH);
        requests.push(
          this.sqs
            .send(
              new SendMessageBatchCommand({
                QueueUrl: this.urlOf(queue),
                Entries: chunk.map((j) => ({
                  Id: j.message.id,
                  MessageBody: JSON.stringify(j.message),
                  DelaySeconds: clampDelay(j.delaySeconds),
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

  async changeVisibility(queue: string, receiptHandle: string, seconds: number): Promise<void> {
    await this.sqs.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: this.urlOf(queue),
        ReceiptHandle: receiptHandle,
        VisibilityTimeout: Math.max(0, Math.min(MAX_VISIBILITY_SECONDS, Math.ceil(seconds))),
      }),
    );
  }

  async delete(queue: string, receiptHandle: string): Promise<void> {
    await this.sqs.send(
      new DeleteMessageCommand({ QueueUrl: this.urlOf(queue), ReceiptHandle: receiptHandle }),
    );
  }

  async receive(queue: string, max: number, waitSeconds: number): Promise<Message[]> {
    const out = await this.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: this.urlOf(queue),
        MaxNumberOfMessages: Math.min(SQS_BATCH, max),
        WaitTimeSeconds: waitSeconds,
        MessageSystemAttributeNames: ["ApproximateReceiveCount", "SentTimestamp"],
      }),
    );
    return out.Messages ?? [];
  }
}

function clampDelay(seconds: number): number {
  return Math.max(0, Math.min(MAX_NATIVE_DELAY_SECONDS, Math.ceil(seconds)));
}
