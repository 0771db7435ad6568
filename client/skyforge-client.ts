import type { AppNames, KindName, PayloadOf, QueueName } from "../lib/app/define-app.ts";
import type { BatchResultItem, EnqueueRequest, JobView, ListJobsQuery } from "../lib/job/schemas.ts";
import type { MisfirePolicy } from "../lib/store/schedule-item.ts";

/**
 * What the typed producer client offers (client/create-client.ts builds it). Kinds, payloads and
 * queue names are checked against the app at compile time; payloads are also validated by the
 * kind's schema before anything is sent, when the client is given the app value.
 */

/** The enqueue request's other fields, with the queue checked against the app. */
export type EnqueueOptions<A extends AppNames> = Omit<EnqueueRequest, "kind" | "payload" | "queue"> & {
  queue?: QueueName<A>;
};

/** One job of an enqueueMany call: a kind with its own payload type. */
export type EnqueueItem<A extends AppNames> = {
  [K in KindName<A>]: { kind: K; payload: PayloadOf<A, K> } & EnqueueOptions<A>;
}[KindName<A>];

export interface Enqueued {
  job: JobView;
  duplicate: boolean;
}

export type CancelOutcome = "cancelled" | "requested" | "already_cancelled";

export interface JobPage {
  items: JobView[];
  cursor?: string;
}

export type ListOptions<A extends AppNames> = Partial<Omit<ListJobsQuery, "queue">> & {
  queue?: QueueName<A>;
};

/** A queue as GET /queues shows it (settings in force, pause state, live counts, event source). */
export type QueueView = Record<string, unknown> & { name: string; paused: boolean };

export interface QueuePatch {
  maxConcurrency?: number;
  backoff?: { baseSeconds?: number; maxSeconds?: number };
  retentionDays?: { done?: number; dead?: number };
}

/** A schedule as PUT /schedules/{name} takes it; kind and payload are typed from the app. */
export type ScheduleInput<A extends AppNames> = {
  [K in KindName<A>]: {
    cron: string;
    timezone?: string;
    kind: K;
    payload?: PayloadOf<A, K>;
    queue?: QueueName<A>;
    enabled?: boolean;
    misfire?: MisfirePolicy;
  };
}[KindName<A>];

export type ScheduleView = Record<string, unknown> & { name: string };

export interface SkyforgeClient<A extends AppNames> {
  enqueue<K extends KindName<A>>(
    kind: K,
    payload: PayloadOf<A, K>,
    options?: EnqueueOptions<A>,
  ): Promise<Enqueued>;
  /**
   * Any number of jobs, sent 100 per request (POST /jobs/batch); one result per job, in order. A job
   * the service refused carries its error and the others go on.
   */
  enqueueMany(jobs: readonly EnqueueItem<A>[]): Promise<BatchResultItem[]>;
  get(id: string): Promise<JobView>;
  list(options?: ListOptions<A>): Promise<JobPage>;
  cancel(id: string): Promise<JobView & { cancel: CancelOutcome }>;
  retry(id: string): Promise<JobView>;
  queues: {
    list(): Promise<QueueView[]>;
    pause(name: QueueName<A>): Promise<QueueView>;
    resume(name: QueueName<A>): Promise<QueueView>;
    update(name: QueueName<A>, patch: QueuePatch): Promise<QueueView>;
  };
  schedules: {
    list(): Promise<ScheduleView[]>;
    put(name: string, schedule: ScheduleInput<A>): Promise<ScheduleView>;
    remove(name: string): Promise<void>;
  };
}
