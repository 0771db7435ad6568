import type { AppNames, KindName, PayloadOf, QueueName } from "../lib/declarations/app-names.ts";
import type { AppJobRequest } from "../lib/declarations/define-app.ts";
import type { MisfirePolicy } from "../lib/declarations/schedule-declaration.ts";
import type { ErrorBody } from "../lib/errors.ts";
import type {
  JobSteps,
  StepView,
  TokenCompleted,
  TokenView,
  WaitingCounts,
  WaitingView,
} from "../lib/job/durable.ts";
import type { BusiestKeys, FlowKeyView } from "../lib/job/flow-views.ts";
import type {
  ChildrenQuery,
  GroupChildrenPage,
  GroupFailureMode,
  GroupView,
} from "../lib/job/group-schemas.ts";
import type { RealtimeEvent } from "../lib/job/realtime-wire.ts";
import type { ReplayAnswer, ReplayRequest } from "../lib/job/replay-schemas.ts";
import type {
  BatchResultItem,
  EnqueueRequest,
  JobSummary,
  JobView,
  ListJobsQuery,
  ListView,
} from "../lib/job/schemas.ts";
import type { JobStatus } from "../lib/job/status.ts";

/**
 * What the typed producer client offers (client/create-client.ts builds it). Kinds, payloads and
 * queue names are checked against the app at compile time; payloads are also validated by the
 * kind's schema before anything is sent, when the client is given the app value.
 */

/** The enqueue request's other fields, with the queue checked against the app. */
export type EnqueueOptions<A extends AppNames> = Omit<EnqueueRequest, "kind" | "payload" | "queue"> & {
  queue?: QueueName<A>;
} & TraceOptions;

/**
 * The producer's W3C trace context, sent as the `traceparent`/`tracestate` headers (the job's runs
 * are spans of that trace). By default the active OpenTelemetry context's (client/trace-context.ts).
 */
export interface TraceOptions {
  traceparent?: string;
  tracestate?: string;
}

/** One job of an enqueueMany call: a kind with its own payload type. */
export type EnqueueItem<A extends AppNames> = {
  [K in KindName<A>]: { kind: K; payload: PayloadOf<A, K> } & EnqueueOptions<A>;
}[KindName<A>];

/**
 * Why a job of an enqueueMany call has no id: the API's error for it, the client's refusal, or the
 * error of the request that carried it (client/enqueue-many.ts batchFailure).
 */
export type EnqueueManyError = ErrorBody["error"] & {
  /**
   * Set when nothing said whether the job was queued: its request got no answer, a 5xx or a function
   * error, so it may or may not be queued (send it again with a uniqueKey to be sure of once).
   * Absent on a refusal: a job refused was not queued.
   */
  unanswered?: true;
};

/** One job's outcome in enqueueMany, numbered as the caller's list: its id, or its error. */
export interface EnqueueManyResult extends Omit<BatchResultItem, "error"> {
  error?: EnqueueManyError;
}

export interface Enqueued {
  job: JobView;
  duplicate: boolean;
  /** The enqueue joined a job of its debounce or singleton key (docs/guide/flow-control.md): `job` runs for it. */
  debounced?: boolean;
}

export type CancelOutcome = "cancelled" | "requested" | "already_cancelled" | "tombstoned";

export interface JobPage<J = JobView> {
  items: J[];
  cursor?: string;
  /**
   * A search without a tag on a table past 50 000 items read only that many: the page is the newest
   * of what it read, not surely the table's newest (docs/guide/finding-runs.md). Add a tag to be exact.
   */
  truncated?: true;
}

/**
 * GET /jobs's query. `view: "summary"` lists jobs without payload and result (JobSummary): what a
 * poller wants, and the only view whose page of 100 large jobs surely fits an API Gateway answer.
 */
export type ListOptions<A extends AppNames> = Partial<
  Omit<ListJobsQuery, "queue" | "waiting" | "kind" | "createdAfter" | "createdBefore">
> & {
  queue?: QueueName<A>;
};

/**
 * `jobs.search`'s filters (GET /jobs; docs/guide/finding-runs.md): every one given must hold, and
 * the page comes newest first. A time is a Date or an ISO date with a zone: createdAfter ≤ createdAt
 * < createdBefore. Pass the answer's `cursor` with the same filters for the next page.
 */
export interface SearchOptions<A extends AppNames> {
  tag?: string;
  kind?: KindName<A>;
  status?: JobStatus;
  /** A flow key (the kind's first limit's). */
  key?: string;
  createdAfter?: Date | string;
  createdBefore?: Date | string;
  /** Text in the job's last error (case-sensitive). */
  error?: string;
  queue?: QueueName<A>;
  /** 1..100, default 25. */
  limit?: number;
  cursor?: string;
  view?: ListView;
}

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

/** What GET /keys and GET /keys/{kind}/{key} answer: declared once, in lib/job/flow-views.ts. */
export type { BusiestKeys, BusyKey, FlowKeyView } from "../lib/job/flow-views.ts";

/**
 * POST /jobs/replay's request (lib/job/replay-schemas.ts): which ended jobs to run again as new jobs
 * (`filter`: a status, and kind, queue, times, error text or ids), what to change in them, at most
 * how many (a request takes at most 500), whether only to count them (`dryRun`), and the `cursor`
 * of the last answer to go on from. A replay that isn't a dry run needs a `requestId`: the same one
 * again replays nothing twice.
 */
export type ReplayOptions<A extends AppNames> = Omit<ReplayRequest, "filter" | "overrides"> & {
  filter: Omit<ReplayRequest["filter"], "kind" | "queue"> & { kind?: KindName<A>; queue?: QueueName<A> };
  overrides?: Omit<NonNullable<ReplayRequest["overrides"]>, "queue"> & { queue?: QueueName<A> };
};
export type { ReplayAnswer };

/** POST /groups's request, typed from the app: each child and the completion job by its kind. */
export interface GroupRequest<A extends AppNames> {
  id?: string;
  children: readonly AppJobRequest<A>[];
  onComplete: {
    [K in KindName<A>]: { kind: K; payload?: PayloadOf<A, K>; queue?: QueueName<A> };
  }[KindName<A>];
  failure?: GroupFailureMode;
  /** false: add more children with groups.add, then groups.seal. Sealed at once by default. */
  sealed?: boolean;
  expiresInSeconds?: number;
}

export type { JobSteps, StepView, TokenCompleted, TokenView, WaitingCounts, WaitingView };

/** POST /jobs/{id}/subscriptions' request: the group's topic too, the token's life, a cursor. */
export interface SubscriptionOptions {
  group?: boolean;
  expiresInSeconds?: number;
  /** The last stream sequence number already seen. */
  from?: number;
}

export interface SubscriptionAnswer {
  url: string;
  token: string;
  expiresAt: string;
}

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
  enqueueMany(jobs: readonly EnqueueItem<A>[]): Promise<EnqueueManyResult[]>;
  get(id: string): Promise<JobView>;
  list(options?: ListOptions<A> & { view?: "full" }): Promise<JobPage<JobView>>;
  list(options: ListOptions<A> & { view: "summary" }): Promise<JobPage<JobSummary>>;
  list(options: ListOptions<A>): Promise<JobPage<JobView | JobSummary>>;
  cancel(id: string): Promise<JobView & { cancel: CancelOutcome }>;
  retry(id: string): Promise<JobView>;
  /**
   * Resumes a paused job (POST /jobs/{id}/resume): it runs again with a fresh set of attempts, with
   * `payload` instead of its own when given (checked against its kind's schema, and giving the same
   * flow, debounce, singleton or batch key as the job: it keeps its keys). Not paused: 409.
   */
  resume(id: string, options?: { payload?: unknown }): Promise<JobView>;
  /**
   * Bulk replay (POST /jobs/replay): the ended jobs the filter matches, each run again as a new job
   * naming its original (`replayOf`); `jobs` pairs each match with its new job (no id on a dry run).
   * One call takes at most 500 jobs: while the answer has a `cursor`, call again with it (and the
   * same request and `requestId`) to go on.
   */
  replay(request: ReplayOptions<A>): Promise<ReplayAnswer>;
  /** A durable job's recorded steps, in order, and what it waits for (GET /jobs/{id}/steps). */
  steps(jobId: string): Promise<JobSteps>;
  /**
   * Suspended durable jobs per queue, kind and version (GET /jobs?waiting=true[&queue=]): what a
   * deploy's new code will meet. A queue not declared: a 400 SkyforgeApiError.
   */
  waitingCounts(options?: { queue?: QueueName<A> }): Promise<WaitingCounts>;
  /**
   * A read-only realtime token for one job, to hand to a browser (POST /jobs/{id}/subscriptions;
   * docs/guide/realtime.md): `@skyforge/client/realtime`'s `subscribe({ url, token })` follows it.
   */
  subscription(jobId: string, options?: SubscriptionOptions): Promise<SubscriptionAnswer>;
  /** The job's events as they happen, through a fresh subscription; ends after `{ type: "end" }`. */
  subscribe(jobId: string, options?: SubscriptionOptions): AsyncGenerator<RealtimeEvent, void, undefined>;
  /** A wait token's state (GET /tokens/{id}); never its secret. */
  token(id: string): Promise<TokenView>;
  /**
   * Completes a wait token with `data` (POST /tokens/{id}?secret=…), resuming its job. Give the
   * token's url (`{ id, url }` from the handler's createToken): its id and secret are taken from it,
   * and the request goes through this client's transport, not to the url's host. Or give the id and
   * `{ secret }`. Completed twice, timed out, lost its job's race or its job ended: a 409 SkyforgeApiError.
   */
  completeToken(urlOrId: string, data: unknown, options?: { secret?: string }): Promise<TokenCompleted>;
  /**
   * Sends an event (POST /events): every job waiting for `name` with this `match` resumes with
   * `data`; it is kept for its name's lookback for the waits that begin after it (docs/guide/durable-jobs.md).
   * An answer's `continuation` is followed (the event sent again with it) until none is
   * left; `resumed` adds up every call's.
   */
  sendEvent(name: string, match: string, data?: unknown): Promise<{ resumed: number }>;
  /** Finding runs (GET /jobs): by tag, kind, status, flow key, time and error text, newest first. */
  jobs: {
    search(options?: SearchOptions<A> & { view?: "full" }): Promise<JobPage<JobView>>;
    search(options: SearchOptions<A> & { view: "summary" }): Promise<JobPage<JobSummary>>;
    search(options: SearchOptions<A>): Promise<JobPage<JobView | JobSummary>>;
  };
  queues: {
    list(): Promise<QueueView[]>;
    pause(name: QueueName<A>): Promise<QueueView>;
    resume(name: QueueName<A>): Promise<QueueView>;
    update(name: QueueName<A>, patch: QueuePatch): Promise<QueueView>;
  };
  /** Flow keys (docs/guide/flow-control.md): a key's places, line and limits; a queue's busiest keys. */
  keys: {
    /** The queue's keys with the most parked jobs (limit 1..50, default 10). */
    busiest(queue: QueueName<A>, limit?: number): Promise<BusiestKeys>;
    /** A key of one of the kind's limits: its first limit's unless `limit` names another. */
    get(kind: KindName<A>, key: string, limit?: string): Promise<FlowKeyView>;
  };
  schedules: {
    list(): Promise<ScheduleView[]>;
    put(name: string, schedule: ScheduleInput<A>): Promise<ScheduleView>;
    remove(name: string): Promise<void>;
  };
  /** Job groups: fan out, then one completion job when every child ended (README, job groups). */
  groups: {
    create(request: GroupRequest<A>): Promise<GroupView & { duplicate: boolean }>;
    get(id: string): Promise<GroupView>;
    children(id: string, query?: ChildrenQuery): Promise<GroupChildrenPage>;
    add(id: string, children: readonly AppJobRequest<A>[], options?: { seal?: boolean }): Promise<GroupView>;
    seal(id: string): Promise<GroupView>;
    cancel(id: string): Promise<GroupView>;
  };
}
