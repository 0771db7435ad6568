import type { GroupEvent, PublishedEvent, ReplayRequest, StreamWriter } from "../job/realtime-wire.ts";
import type { JobItem } from "../store/job-item.ts";

/** Sends one message to a topic: IoT Core's data plane on AWS, the local broker in `npm start`. */
export interface RealtimePublisher {
  publish(topic: string, payload: string): Promise<void>;
}

/** POST /jobs/{id}/subscriptions' answer: where to connect and the read-only token to connect with. */
export interface Subscription {
  url: string;
  token: string;
  expiresAt: string;
}

/**
 * Realtime (docs/architecture.md §25): the engine's one door to it. Each status change has its own
 * call, made by the runtime where the change is written; none waits for the publish or throws (a
 * failed publish is retried a little, then dropped with the `realtimeDropped` metric).
 */
export interface RealtimeService {
  queued(job: JobItem): void;
  running(job: JobItem): void;
  stepRecorded(job: JobItem, step: string): void;
  /** A durable job suspended: its `waiting` says for what. */
  waiting(job: JobItem): void;
  paused(job: JobItem): void;
  /** done (with its result when small), dead or cancelled. */
  ended(job: JobItem): void;
  /** A group's child's end was recorded in its slice: that slice's counts, on the group's topic. */
  groupProgress(
    groupId: string,
    child: { id: string; queue: string; kind: string },
    progress: Pick<GroupEvent, "slice" | "counts">,
  ): void;
  /** `ctx.stream(name)`: throws a UsageError for a name outside the step-name rules. */
  stream(job: JobItem, name: string): StreamWriter;
  /** Mints a token for the job (and its group when asked). ClientError not_found for an unknown job. */
  subscribe(jobId: string, request: unknown): Promise<Subscription>;
  /**
   * Mints a queue token: its queue's status events, nothing else (lib/realtime/policy.ts). ClientError
   * not_found for a queue the app doesn't declare.
   */
  subscribeQueue(queue: string, request: unknown): Promise<Subscription>;
  /** Answers a subscriber's replay request: the job's status now, its chunks after `from`, a marker. */
  replay(
    jobId: string,
    request: ReplayRequest,
    answer: (event: PublishedEvent | { type: "replayed"; id: string }) => Promise<void>,
  ): Promise<void>;
  /** Resolves once every publish begun so far has settled (a Lambda awaits it before it returns). */
  drain(): Promise<void>;
}
