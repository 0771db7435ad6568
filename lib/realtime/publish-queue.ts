import { errorFields, type Log } from "../observability/log.ts";
import type { JobMetrics } from "../observability/metrics.ts";
import type { RealtimePublisher } from "../services/realtime-service.ts";

/** Tries per message: the first, then two retries after these pauses (ms). */
const RETRY_PAUSES_MS = [50, 250] as const;

/**
 * Publishes without making anyone wait: each topic's messages go out one after another, in the
 * order they were sent (a subscriber sees a job's events in order), and a message the publisher
 * refuses is retried twice, then dropped and counted (`realtimeDropped`). A subscriber catches up on
 * dropped chunks by its replay (docs/architecture.md §25); a GET of the job is always the truth.
 */
export class PublishQueue {
  private readonly tails = new Map<string, Promise<void>>();

  private readonly publisher: RealtimePublisher;
  private readonly metrics: JobMetrics;
  private readonly log: Log;

  constructor(publisher: RealtimePublisher, metrics: JobMetrics, log: Log) {
    this.publisher = publisher;
    this.metrics = metrics;
    this.log = log;
  }

  send(topic: string, payload: string, job: { queue: string; kind: string }): void {
    const previous = this.tails.get(topic) ?? Promise.resolve();
    const next = previous.then(() => this.deliver(topic, payload, job));
    this.tails.set(topic, next);
    void next.then(() => {
      if (this.tails.get(topic) === next) this.tails.delete(topic);
    });
  }

  async drain(): Promise<void> {
    while (this.tails.size > 0) await Promise.all([...this.tails.values()]);
  }

  private async deliver(topic: string, payload: string, job: { queue: string; kind: string }): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.publisher.publish(topic, payload);
        return;
      } catch (error) {
        const pause = RETRY_PAUSES_MS[attempt];
        if (pause === undefined) {
          this.metrics.count("realtimeDropped", job.queue, job.kind);
          this.log.warn("dropped a realtime message after retries", { topic, ...errorFields(error) });
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, pause));
      }
    }
  }
}
