import * as z from "zod";
import type { ErrorBody } from "../errors.ts";
import { MAX_VISIBILITY_SECONDS, QUEUE_MESSAGE_RETENTION_SECONDS } from "../limits.ts";
import { BoundedJson } from "./json-depth.ts";
import { LONE_SURROGATE } from "./key-layout.ts";
import { Priority } from "./priority.ts";
import { jobStatuses } from "./status.ts";

/**
 * Serialized payload (and result) cap, in UTF-8 bytes: 1 MiB, SQS's own maximum message size. Past
 * the claim check's threshold the body lives in the claims bucket and the message carries only its
 * key (lib/claims/), so no payload is bounded by its message.
 */
export const MAX_PAYLOAD_BYTES = 1024 * 1024;
export const MAX_BATCH = 100;
/** Far more than any cursor the store hands out (a few hundred characters). */
export const MAX_CURSOR_CHARS = 2048;

const jsonValue: z.ZodType<unknown> = z.json();

/** A queue's name as declared: it ends up in SQS queue names and table keys. */
const QueueName = z
  .string()
  .regex(/^[a-z][a-z0-9-]{0,39}$/, "queue names are lowercase letters, digits and dashes");

/**
 * A string that DynamoDB can store as it is. DynamoDB keeps strings as UTF-8, which has no form for
 * a lone surrogate (half of a UTF-16 pair): the SDK would store U+FFFD instead, so two different keys
 * would collide. Refused with a 400 naming the field. (Payloads never hit this: they are stored as
 * JSON text, where JSON.stringify writes a lone surrogate as a `\uXXXX` escape.)
 */
const StorableString = z.string().refine((s) => s.isWellFormed(), { message: LONE_SURROGATE });

/** Tags a job may carry, and the length of each in characters (code points). */
export const MAX_TAGS = 10;
export const MAX_TAG_CHARS = 64;
/**
 * A job's tags (docs/guide/finding-runs.md): at most MAX_TAGS, each 1..MAX_TAG_CHARS characters of
 * well-formed Unicode; each is a key of the tag index (lib/store/tag-entry-ops.ts).
 */
export const Tags = z
  .array(
    StorableString.refine((t) => t.length > 0 && [...t].length <= MAX_TAG_CHARS, {
      message: `a tag is 1..${MAX_TAG_CHARS} characters`,
    }),
  )
  .max(MAX_TAGS, `at most ${MAX_TAGS} tags`);

/** A job's run time limit, from an enqueue or a pool kind: up to SQS's 12 h visibility ceiling. */
export const TimeoutSeconds = z.number().int().min(1).max(MAX_VISIBILITY_SECONDS);
/**
 * A start deadline, from an enqueue or a kind declaration: a job that hasn't started this long after
 * it was due never runs. At most as long as SQS keeps a message, which no job can outwait anyway.
 */
export const StartWithinSeconds = z.number().int().min(1).max(QUEUE_MESSAGE_RETENTION_SECONDS);
/** Attempts a job may take, from an enqueue or a kind declaration. */
export const MaxAttempts = z.number().int().min(1).max(100);

export const EnqueueRequest = z
  .object({
    kind: z.string().min(1).max(64),
    payload: BoundedJson.optional(),
    queue: QueueName.optional(),
    delaySeconds: z
      .number()
      .int()
      .min(0)
      .max(365 * 24 * 3600)
      .optional(),
    runAt: z.iso.datetime({ offset: true }).optional(),
    uniqueKey: StorableString.min(1).max(200).optional(),
    maxAttempts: MaxAttempts.optional(),
    /** 1..5 (default 3), or "normal" (3), "critical" (5, and the pool grows for it): lib/job/priority.ts. */
    priority: Priority.optional(),
    timeoutSeconds: TimeoutSeconds.optional(),
    startWithinSeconds: StartWithinSeconds.optional(),
    /** Searchable labels (GET /jobs?tag=); follow-ups, group children and replays inherit them. */
    tags: Tags.optional(),
  })
  .strict()
  .refine((r) => r.delaySeconds === undefined || r.runAt === undefined, {
    message: "give delaySeconds or runAt, not both",
    path: ["runAt"],
  });
export type EnqueueRequest = z.infer<typeof EnqueueRequest>;

/** The batch envelope is checked loosely so that one bad item doesn't fail the others. */
export const EnqueueBatchRequest = z.object({ jobs: z.array(z.unknown()).min(1).max(MAX_BATCH) }).strict();

export const JobStatusSchema = z.enum(jobStatuses);

/** One attempt of a job (docs/architecture.md §4): when it ran, how it ended, who ran it. */
export const AttemptView = z.object({
  attempt: z.number().int(),
  startedAt: z.iso.datetime(),
  endedAt: z.iso.datetime().optional(),
  /** A finalize's outcome, "lapsed" (its lease ran out without an end) or "running". */
  outcome: z.string(),
  error: z.string().optional(),
  runner: z.string().optional(),
});
export type AttemptView = z.infer<typeof AttemptView>;

export const JobView = z.object({
  id: z.string(),
  kind: z.string(),
  queue: z.string(),
  status: JobStatusSchema,
  attempts: z.number().int(),
  maxAttempts: z.number().int(),
  payload: jsonValue,
  createdAt: z.iso.datetime(),
  runAt: z.iso.datetime(),
  /** The start deadline: not started by then, the job ends dead unrun ("start deadline passed"). */
  startBy: z.iso.datetime().optional(),
  /** As enqueued: 1..5, "normal" or "critical". */
  priority: Priority.optional(),
  result: jsonValue.optional(),
  lastError: z.string().optional(),
  startedAt: z.iso.datetime().optional(),
  /** A running job's lease end: past it with no heartbeat, its worker died or froze (`skyforge doctor`). */
  leaseUntil: z.iso.datetime().optional(),
  finishedAt: z.iso.datetime().optional(),
  uniqueKey: z.string().optional(),
  /** Its tags, as enqueued (GET /jobs?tag= finds it by each). */
  tags: z.array(z.string()).optional(),
  cancelRequested: z.boolean().optional(),
  /** A debounced or singleton kind's job: its key, and how many enqueues it answers (docs/architecture.md §19). */
  coalesceKey: z.string().optional(),
  enqueues: z.number().int().optional(),
  /** A singleton job waits for these jobs of its key to end before it starts. */
  after: z.array(z.string()).optional(),
  /** A replay's job: the ended job it runs again (POST /jobs/replay). */
  replayOf: z.string().optional(),
  /** Its producer's W3C traceparent: the trace its runs are spans of (docs/architecture.md §23). */
  traceparent: z.string().optional(),
  /** Its groups (§15): the one it is a child of, the one it completes, those its runs created. */
  group: z.string().optional(),
  completes: z.string().optional(),
  childGroups: z.array(z.string()).optional(),
  /** A flow-controlled kind's job: its flow key (docs/guide/flow-control.md), its first limit's. */
  flowKey: z.string().optional(),
  /** A job of a kind with several flow limits: its keys for the others, by limit name. */
  flowKeys: z.record(z.string(), z.string()).optional(),
  /** Queued behind its flow key's concurrency: it starts when one of the key's runs ends. */
  waitingForKey: z.boolean().optional(),
  /** Waiting in the line of this limit (by name) when it is not its kind's first: its key is `flowKeys[waitingIn]`. */
  waitingIn: z.string().optional(),
  /** A durable job: the version of its kind that started its journal (docs/guide/durable-jobs.md, "Versions"). */
  version: z.string().optional(),
  /** A suspended durable job: a sleep, a token or an event, until when (docs/architecture.md §22). */
  waiting: z
    .object({
      for: z.enum(["sleep", "token", "event", "any", "child"]),
      until: z.iso.datetime().optional(),
      token: z.string().optional(),
      event: z.string().optional(),
      match: z.string().optional(),
      child: z.string().optional(),
    })
    .optional(),
  /** A child job a durable handler invoked (`ctx.invoke`): its parent and the parent's step. */
  parent: z.object({ id: z.string(), step: z.string() }).optional(),
  /** Every attempt, oldest first (the last HISTORY_KEEP ended ones and the current one). */
  history: z.array(AttemptView).optional(),
  /** Older attempts dropped from `history`. */
  historyDropped: z.number().int().optional(),
  /**
   * In a list only: bodies kept in the claims bucket (over 8 KiB) are left out, so that a page stays
   * far under Lambda's 6 MB answer; GET /jobs/{id} shows them.
   */
  omitted: z.array(z.enum(["payload", "result"])).optional(),
});
export type JobView = z.infer<typeof JobView>;

/**
 * A job as `GET /jobs?view=summary` lists it: all but its payload and result, neither parsed nor
 * read: what pollers list with.
 */
export const JobSummary = JobView.omit({ payload: true, result: true });
/**
 * Typed with its payload and result undefined (they are absent): reading either as data does not
 * compile, and a summary still fits code that reads a JobView's other fields (a JobView's payload
 * is `unknown`, which undefined is).
 */
export type JobSummary = z.infer<typeof JobSummary> & { payload: undefined; result?: undefined };

/** How GET /jobs shows each job: "full" JobViews (the default), or "summary" JobSummaries. */
export const listViews = ["full", "summary"] as const;
export type ListView = (typeof listViews)[number];

export interface EnqueueResult {
  job: JobView;
  duplicate: boolean;
  /**
   * The enqueue joined a job of its debounce or singleton key instead of creating one (answered 200
   * with that job's id); the job will run for it.
   */
  debounced?: boolean;
}

export interface BatchResultItem {
  index: number;
  id?: string;
  duplicate?: boolean;
  debounced?: boolean;
  error?: ErrorBody["error"];
}

/** A search's time bound: an ISO date with a zone, as the API shows times. */
const SearchTime = z.iso.datetime({ offset: true }).transform((t) => Date.parse(t));

export const ListJobsQuery = z
  .object({
    queue: QueueName.optional(),
    status: JobStatusSchema.optional(),
    /** Jobs carrying this tag (the tag index: docs/guide/finding-runs.md). */
    tag: Tags.element.optional(),
    kind: z.string().min(1).max(64).optional(),
    /** Jobs of this flow key (their kind's first limit's). */
    key: StorableString.min(1).max(256).optional(),
    /** Created at or after this time, and before that one. */
    createdAfter: SearchTime.optional(),
    createdBefore: SearchTime.optional(),
    /** Text in the job's last error (case-sensitive). */
    error: StorableString.min(1).max(200).optional(),
    limit: z.coerce.number().int().min(1).max(100).default(25),
    view: z.enum(listViews).default("full"),
    /**
     * `true`: instead of a page of jobs, the suspended durable jobs counted per kind and version
     * (docs/guide/durable-jobs.md, "Versions"); only `queue` may go with it.
     */
    waiting: z.literal("true").optional(),
    /** Opaque to the caller; the store checks what it decodes to (lib/store/cursor.ts). Empty means none. */
    cursor: z
      .string()
      .max(MAX_CURSOR_CHARS)
      .regex(/^[A-Za-z0-9_-]*$/, "not a cursor this API returned")
      .optional(),
  })
  .strict()
  .refine(
    (q) => q.createdAfter === undefined || q.createdBefore === undefined || q.createdAfter <= q.createdBefore,
    { message: "createdAfter is after createdBefore", path: ["createdAfter"] },
  );
export type ListJobsQuery = z.infer<typeof ListJobsQuery>;
/** GET /jobs's filters as a caller gives them (times as ISO dates). */
export type ListJobsFilters = Omit<z.input<typeof ListJobsQuery>, "waiting" | "view" | "limit" | "cursor">;
