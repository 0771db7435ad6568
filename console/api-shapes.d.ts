/**
 * The parts of the API's answers that the console reads, for the type check of its browser files
 * (console/tsconfig.json). The page has no build step, so it cannot import the client's schemas;
 * these name only the fields it shows. Types only: nothing here is served.
 */

export interface Job {
  id: string;
  kind: string;
  queue: string;
  status: string;
  attempts: number;
  maxAttempts: number;
  createdAt: string;
  runAt?: string;
  startedAt?: string;
  finishedAt?: string;
  /** As enqueued: 1..5, "normal" or "critical". */
  priority?: number | string;
  cancelRequested?: boolean;
  uniqueKey?: string;
  lastError?: string;
  payload?: unknown;
  result?: unknown;
  /** The job this one replays (POST /jobs/replay). */
  replayOf?: string;
  /** A suspended durable job: what it waits for (docs/guide/durable-jobs.md). */
  waiting?: Waiting;
  /** A child a durable handler invoked (ctx.invoke): its parent and the parent's step. */
  parent?: { id: string; step: string };
  /** A durable job: the version of its kind that started its journal (docs/guide/durable-jobs.md, "Versions"). */
  version?: string;
  /**
   * A flow-controlled kind's job: its key (its kind's first limit's), its other limits' keys by name;
   * parked (queued, waiting for a place among a key's runs), in the line of `waitingIn` when not the first's.
   */
  flowKey?: string;
  flowKeys?: Record<string, string>;
  waitingForKey?: boolean;
  waitingIn?: string;
  /** Its producer's W3C traceparent (docs/architecture.md §23). */
  traceparent?: string;
  /** The group it is a child of, the group it completes, the groups its runs created. */
  group?: string;
  completes?: string;
  childGroups?: string[];
  /** Every attempt, oldest first. */
  history?: Attempt[];
}

/** One attempt of a job's history (GET /jobs/{id}). */
export interface Attempt {
  attempt: number;
  startedAt: string;
  endedAt?: string;
  outcome: string;
  error?: string;
  runner?: string;
}

/** GET /groups/{id}: what the timeline shows of a group. */
export interface Group {
  id: string;
  status: string;
  createdAt?: string;
  counts?: { total: number; pending: number; done: number; dead: number; cancelled: number };
}

/** What a suspended durable job waits for: a sleep's end, a token's completion or an event. */
export interface Waiting {
  for: "sleep" | "token" | "event" | "child";
  until?: string;
  token?: string;
  event?: string;
  match?: string;
  child?: string;
}

/** One recorded step of GET /jobs/{id}/steps; a token step's result is `{ id, url }`. */
export interface Step {
  name: string;
  type: "step" | "sleep" | "token" | "event" | "race" | "child" | "version";
  status: string;
  attempt: number;
  at: string;
  until?: string;
  /** A child step's job id (ctx.invoke). */
  child?: string;
  result?: unknown;
}

/** GET /jobs/{id}/steps: the steps in the handler's order, and the wait while suspended. */
export interface JobSteps {
  jobId: string;
  status: string;
  waiting?: Waiting;
  steps: Step[];
}

/** POST /tokens/{id}: the token completed; `resumed` when its job was waiting already. */
export interface TokenCompleted {
  id: string;
  jobId: string;
  status: "completed";
  resumed: boolean;
}

/** POST /jobs/replay: how many matched, how many were replayed, and each match's new job. */
export interface ReplayAnswer {
  matched: number;
  replayed: number;
  jobs: { from: string; id?: string }[];
  /** More may match (never for `filter.ids`, which the console sends): the same request again with it goes on. */
  cursor?: string;
}

/** POST /jobs: the job, and whether its unique key had already enqueued it. */
export interface Enqueued extends Job {
  duplicate?: boolean;
}

/** A page of GET /jobs, /queues or /schedules: `cursor` when there is more. */
export interface Page<T> {
  items: T[];
  cursor?: string;
  /** GET /jobs without a tag on a table past 50 000 items: the newest of what the scan read. */
  truncated?: true;
}

export type CountName = "visible" | "inFlight" | "delayed" | "dlq";

export interface Queue {
  name: string;
  paused: boolean;
  cooldownUntil?: string;
  declared?: { tier?: string };
  eventSource?: unknown;
  counts?: Partial<Record<CountName, number>>;
  maxConcurrency?: number;
}

/** GET /keys?queue=…: a queue's flow keys with parked jobs; declared once, in lib/ (through the client's vocabulary). */
export type { BusiestKeys, BusyKey } from "../client/vocabulary.ts";

export interface Schedule {
  name: string;
  source: string;
  cron: string;
  timezone: string;
  kind: string;
  queue?: string;
  nextRunAt?: string;
  lastRunAt?: string;
  enabled: boolean;
  misfire?: string;
  lastError?: string;
  lastErrorAt?: string;
}

/** One field's complaint in a validation error. */
export interface Issue {
  path: string;
  message: string;
}
