import { type QueueDeclaration, tierOf } from "../declarations/queue-declaration.ts";
import { RESUME_ON_TOKEN_ATTRIBUTES } from "../store/step-ops.ts";
import { COMPLETE_TOKEN_ATTRIBUTES } from "../store/token-ops.ts";
import type { PublishedTopics } from "./realtime-plan.ts";

/**
 * Least privilege, as data: what each deployed role may do, on which resources. Infra turns each
 * reference into an ARN; tests check the plan (no `*` beyond the table's indexes, who may touch event
 * source mappings). Every action here is one the role's code really sends (see lib/store, lib/transport,
 * lib/queue-control).
 */
export type Role =
  | "enqueue"
  | "api"
  | "worker"
  | "reaper"
  | "cleanup"
  | "cron"
  | "pool"
  /** `POST /tokens/{id}`, the one route without IAM auth (lib/handlers/token-callback.ts). */
  | "token-callback"
  /** IoT Core's custom authorizer for realtime subscribers (lib/realtime/authorizer-handler.ts). */
  | "realtime-authorizer"
  /** Answers realtime subscribers' replay requests, invoked by an IoT rule (lib/realtime/replay-handler.ts). */
  | "realtime-replay";

export type ResourceRef =
  | { type: "table" }
  /** `<table arn>/index/*`: the one wildcard, over the table's own indexes. */
  | { type: "tableIndexes" }
  | { type: "queue"; queue: string }
  | { type: "dlq"; queue: string }
  | { type: "eventSourceMapping"; queue: string }
  /** `<claims bucket arn>/claims/*`: the claim check's objects (docs/architecture.md §17), nothing else. */
  | { type: "claimObjects" }
  /** A completed token's data objects, and no other of the bucket (TOKEN_OBJECTS_PATTERN, lib/claims/claim-keys.ts). */
  | { type: "tokenObjects" }
  /** The realtime token secret's SecureString parameter (lib/deploy-plan/realtime-plan.ts). */
  | { type: "realtimeSecret" }
  /** `arn:…:iot:…:topic/<prefix>/<topics>/*`: one tree of the stack's own realtime topics. */
  | { type: "realtimeTopics"; topics: PublishedTopics };

/** One IAM condition: its operator, the context key it tests, and the values that pass. */
export interface GrantCondition {
  test: string;
  variable: string;
  values: readonly string[];
}

export interface Grant {
  actions: readonly string[];
  resources: readonly ResourceRef[];
  /** Conditions that must all hold (IAM ANDs a statement's conditions): undefined is none. */
  conditions?: readonly GrantCondition[];
}

/**
 * The only partition keys a request may name, as IAM `StringLike` patterns: `dynamodb:LeadingKeys`,
 * every key of the request (`ForAllValues`).
 */
export const leadingKeys = (...patterns: string[]): GrantCondition => ({
  test: "ForAllValues:StringLike",
  variable: "dynamodb:LeadingKeys",
  values: patterns,
});

/**
 * The only top-level attributes a request may name, read, write or test in its condition
 * (`dynamodb:Attributes`, every one of them); the key's attributes must be among them. Such a
 * request may not have the whole item returned, so it goes with NO_RETURN_VALUES.
 */
export const onlyAttributes = (names: readonly string[]): GrantCondition => ({
  test: "ForAllValues:StringEquals",
  variable: "dynamodb:Attributes",
  values: names,
});

/** An UpdateItem returns nothing (`dynamodb:ReturnValues` NONE): no attribute outside the list is read. */
export const NO_RETURN_VALUES: GrantCondition = {
  test: "StringEquals",
  variable: "dynamodb:ReturnValues",
  values: ["NONE"],
};

/** The token callback's table keys: the token's item and its job's (lib/store/keys.ts tokenKey, jobKey). */
export const TOKEN_CALLBACK_LEADING_KEYS = ["tok#*", "job#*"] as const;

const JOB_ITEMS = ["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"];
/** Job groups (docs/architecture.md §15): a group's slices are one Query; its children one BatchGetItem. */
const GROUP_READS = ["dynamodb:Query", "dynamodb:BatchGetItem"];
const table: ResourceRef = { type: "table" };
const claimObjects: ResourceRef = { type: "claimObjects" };
/**
 * Every role that enqueues or runs jobs writes large payloads and results, and reads them back: a
 * run reads its payload, and a duplicate enqueue (a unique key, a group's completion) answers with
 * the job that holds it, bodies and all.
 */
const putAndGetClaims: Grant = { actions: ["s3:PutObject", "s3:GetObject"], resources: [claimObjects] };
const indexes: ResourceRef = { type: "tableIndexes" };
/**
 * Realtime (docs/architecture.md §25): the roles that change jobs' status publish their events (the
 * worker, the pool, the API, the enqueue, the reaper and cron; not the token callback, reached
 * without credentials, whose resume the claim then publishes), to the stack's own job, group and
 * queue topics only (IoT's data-plane Publish); the API also mints tokens.
 */
const publishEvents: Grant = {
  actions: ["iot:Publish"],
  resources: [
    { type: "realtimeTopics", topics: "jobs" },
    { type: "realtimeTopics", topics: "groups" },
    { type: "realtimeTopics", topics: "queues" },
  ],
};
const readRealtimeSecret: Grant = { actions: ["ssm:GetParameter"], resources: [{ type: "realtimeSecret" }] };

const mains = (qs: readonly QueueDeclaration[]) =>
  qs.map((q): ResourceRef => ({ type: "queue", queue: q.name }));
const dlqs = (qs: readonly QueueDeclaration[]) =>
  qs.map((q): ResourceRef => ({ type: "dlq", queue: q.name }));
const mappings = (qs: readonly QueueDeclaration[]) =>
  qs
    .filter((q) => tierOf(q) === "lambda")
    .map((q): ResourceRef => ({ type: "eventSourceMapping", queue: q.name }));

/** Job items, plus queries of the status index (scheduled and dead jobs, the reaper's and listings'). */
const jobsWithIndex: Grant[] = [
  { actions: [...JOB_ITEMS, ...GROUP_READS], resources: [table] },
  { actions: ["dynamodb:Query"], resources: [indexes] },
];
const eventSourceControl = (qs: readonly QueueDeclaration[]): Grant => ({
  actions: ["lambda:UpdateEventSourceMapping", "lambda:GetEventSourceMapping"],
  resources: mappings(qs),
});

/**
 * The grants of one role. `queue` names the worker's or pool's own queue(s) where the role is tied to
 * them. The Lambda event source adds its own receive/delete rights to each worker (SST's subscribe).
 */
export function grantsFor(
  role: Role,
  queues: readonly QueueDeclaration[],
  own: readonly string[] = [],
): Grant[] {
  const ownQueues = queues.filter((q) => own.includes(q.name));
  switch (role) {
    case "enqueue":
      // Unique keys are locks in the table; the message goes to whichever queue the kind names.
      // A group's create reads its slices back.
      return [
        { actions: [...JOB_ITEMS, ...GROUP_READS], resources: [table] },
        { actions: ["sqs:SendMessage"], resources: mains(queues) },
        putAndGetClaims,
        publishEvents,
      ];
    case "api":
      // Listings scan or query; retry re-sends; GET /queues reads depths (main and DLQ); pause,
      // resume and concurrency act on the Lambda workers' mappings.
      return [
        ...jobsWithIndex,
        { actions: ["dynamodb:Scan"], resources: [table] },
        { actions: ["sqs:SendMessage", "sqs:GetQueueAttributes"], resources: mains(queues) },
        { actions: ["sqs:GetQueueAttributes"], resources: dlqs(queues) },
        eventSourceControl(queues),
        putAndGetClaims,
        publishEvents,
        readRealtimeSecret,
      ];
    case "worker":
      // A throttle or a pause re-sends the message; a retry or a duplicate moves its visibility. A
      // handler's follow-ups and groups, and a group's completion job, go to whichever queue their
      // kind names; a group's end reads its slices and children.
      return [
        { actions: [...JOB_ITEMS, ...GROUP_READS], resources: [table] },
        { actions: ["sqs:SendMessage"], resources: mains(queues) },
        { actions: ["sqs:ChangeMessageVisibility"], resources: mains(ownQueues) },
        putAndGetClaims,
        publishEvents,
      ];
    case "reaper":
      // Promotion sends in batches (SendMessage covers SendMessageBatch); the DLQ drain receives and
      // deletes; event source repair reads and updates the mappings; the stale-message pass scans
      // one slice of the table per run.
      return [
        ...jobsWithIndex,
        { actions: ["dynamodb:Scan"], resources: [table] },
        { actions: ["sqs:SendMessage"], resources: mains(queues) },
        { actions: ["sqs:ReceiveMessage", "sqs:DeleteMessage"], resources: dlqs(queues) },
        eventSourceControl(queues),
        // A group's completion job it re-enqueues; re-sent messages carry a payload's key, unread.
        putAndGetClaims,
        publishEvents,
      ];
    case "cleanup":
      // Dead jobs through the index; the optional sweep scans (off on AWS, where TTL does it).
      return [
        {
          actions: ["dynamodb:GetItem", "dynamodb:DeleteItem", "dynamodb:Query", "dynamodb:Scan"],
          resources: [table],
        },
        { actions: ["dynamodb:Query"], resources: [indexes] },
      ];
    case "cron":
      // Schedules and the leader lease are items in the table (queried by partition, not the index).
      return [
        { actions: [...JOB_ITEMS, "dynamodb:Query"], resources: [table] },
        { actions: ["sqs:SendMessage"], resources: mains(queues) },
        putAndGetClaims,
        publishEvents,
      ];
    case "pool":
      // As the worker: follow-ups, groups and completion jobs may go to any queue.
      return [
        { actions: [...JOB_ITEMS, ...GROUP_READS], resources: [table] },
        {
          actions: ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:ChangeMessageVisibility"],
          resources: mains(ownQueues),
        },
        { actions: ["sqs:SendMessage"], resources: mains(queues) },
        putAndGetClaims,
        publishEvents,
      ];
    case "token-callback":
      // Reached without AWS credentials, so the least of all: read the token and its job (and the
      // job's payload item, for the resume's message); complete the token, writing only what a
      // completion writes (its status, time and data); resume the job, writing only its due time,
      // its hold, its index keys and its wait (never its status, result or payload); keep the data
      // over 8 KiB as a token object (written, never read back here); send the job's message. No
      // Query, Scan, Delete or Put: nothing else of the table can be listed or made.
      return [
        {
          actions: ["dynamodb:GetItem"],
          resources: [table],
          conditions: [leadingKeys(...TOKEN_CALLBACK_LEADING_KEYS)],
        },
        {
          actions: ["dynamodb:UpdateItem"],
          resources: [table],
          conditions: [leadingKeys("tok#*"), onlyAttributes(COMPLETE_TOKEN_ATTRIBUTES), NO_RETURN_VALUES],
        },
        {
          actions: ["dynamodb:UpdateItem"],
          resources: [table],
          conditions: [leadingKeys("job#*"), onlyAttributes(RESUME_ON_TOKEN_ATTRIBUTES), NO_RETURN_VALUES],
        },
        { actions: ["s3:PutObject"], resources: [{ type: "tokenObjects" }] },
        { actions: ["sqs:SendMessage"], resources: mains(queues) },
      ];
    case "realtime-authorizer":
      // Reached by anyone who connects: it reads the secret to check a token, and nothing else.
      return [readRealtimeSecret];
    case "realtime-replay":
      // A replay reads the job and its chunks, and answers on the requester's reply topic.
      return [
        { actions: ["dynamodb:GetItem", "dynamodb:Query"], resources: [table] },
        { actions: ["iot:Publish"], resources: [{ type: "realtimeTopics", topics: "replies" }] },
      ];
  }
}
