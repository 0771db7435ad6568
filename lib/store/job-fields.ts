import * as z from "zod";
import { Priority } from "../job/priority.ts";
import type { JobView } from "../job/schemas.ts";
import type { JobStatus } from "../job/status.ts";
import { type AttemptRecord, historyView } from "./attempt-history.ts";
import type { StepRecord, WaitingRecord } from "./step-record.ts";
import { toWaitingView } from "./step-record.ts";

/**
 * The one map of a job's fields (docs/architecture.md §3): for each, its type, where it is kept and
 * how the API shows it. The job item's type, the message's schema (lib/transport/job-message.ts),
 * plan's item and message, a resent message, a claim's seed and the view are all derived from it
 * (lib/store/job-field-copies.ts), so a new optional field is one entry here plus its feature's code.
 *
 * The fields are grouped into a part per feature. The stored item and message stay flat, as they
 * were first stored (test/fixtures/stored-formats/v1/): nesting a part would cost a format version,
 * and every conditional write names its attributes by their flat names.
 */
interface Field<T> {
  /** Its type; where a message carries it, also the message's check of it. */
  schema: z.ZodType<T>;
  /**
   * The job item stores it. "inline": unless the payload lives in its own item (`payloadRef`).
   * Absent: only the message carries it.
   */
  item?: true | "inline";
  /**
   * The message carries it. "always": every message, a message sent again from the item (redrive,
   * promotion) too. "sender": only when its sender sets it (the enqueue's, a flow gate's); a message
   * rebuilt from the item goes without it, the item being there by then.
   */
  message?: "always" | "sender";
  /** A claim that finds no item (the enqueue died before writing it) writes it from the message. */
  seed?: true;
  /**
   * How GET /jobs/{id} shows it: "same" under its own name, "time" as an ISO date, each when present;
   * or a rule given its value (present or not) and the item. Absent: not shown.
   */
  view?: "same" | "time" | ((value: T | undefined, item: ViewedItem) => Partial<JobView>);
}

/**
 * What a view rule may read of the item besides its own field. Declared apart from the map, which
 * the item's type is derived from; toJobView passes the whole item, so JobItem must fit it.
 */
export type ViewedItem = Parameters<typeof historyView>[0] & { enqueues?: number; parkedIn?: string };

type Item = Field<unknown>["item"];
type Message = Field<unknown>["message"];

/** A field entry: its places kept as literals, its view rule typed by its schema. */
function field<
  S extends z.ZodType,
  const I extends Item = undefined,
  const M extends Message = undefined,
  const D extends true | undefined = undefined,
>(
  schema: S,
  places: { item?: I; message?: M; seed?: D; view?: Field<z.output<S>>["view"] } = {},
): { schema: S; item: I; message: M; seed: D; view?: Field<z.output<S>>["view"] } {
  return { schema, ...places } as { schema: S; item: I; message: M; seed: D };
}

const stored = <T>() => z.custom<T>(); // a type only the store writes: nothing parses it from a caller

/** Most of a job's fields: the item stores them, every message carries them, a claim seeds them. */
const kept = { item: true, message: "always", seed: true } as const;

/** Every job's own fields. */
const job = {
  pk: field(z.string(), { item: true }),
  sk: field(z.string(), { item: true }),
  id: field(z.string().min(1), { ...kept, view: "same" }),
  kind: field(z.string().min(1), { ...kept, view: "same" }),
  queue: field(z.string().min(1), { ...kept, view: "same" }),
  status: field(stored<JobStatus>(), { item: true, view: "same" }),
  attempts: field(z.number(), { item: true, view: "same" }),
  maxAttempts: field(z.number().int().min(1), { ...kept, view: "same" }),
  // As given (v5: 1..5 beside "normal" and "critical"; lib/job/priority.ts priorityLevel reads each).
  priority: field(Priority, { ...kept, view: "same" }),
  createdAt: field(z.number(), { ...kept, view: "time" }),
  runAt: field(z.number(), { ...kept, view: "time" }),
  timeoutSeconds: field(z.number().int().optional(), kept),
  /** The start deadline (ms): runAt + startWithinSeconds. A claim after it ends the job dead, unrun. */
  startBy: field(z.number().optional(), { ...kept, view: "time" }),
  uniqueKey: field(z.string().optional(), { ...kept, view: "same" }),
  tags: field(z.array(z.string().min(1)).max(10).optional(), { ...kept, view: "same" }), // v4; §3 tag entries
  /** The kind's delivery lane when it is not fenced (docs/architecture.md §16); its job has no item until it runs. */
  lane: field(z.enum(["lean", "at-least-once", "fire-and-forget"]).optional(), { message: "sender" }),
  /** The item's format version (lib/store/stored-formats.ts), written with the item; absent: 1. */
  fv: field(z.number().optional(), { item: true }),
};

/**
 * Where the payload is: inline JSON (the handler's source of truth); over INLINE_PAYLOAD_BYTES also
 * in its own immutable item (`payloadRef`, the job item then keeps none); over the claim check's
 * threshold only in the claims bucket (`payloadObject`, lib/claims/), and then a message carries
 * only that key. toJobView is given the payload's JSON wherever it was loaded from.
 */
const payload = {
  payload: field(z.string().optional(), { item: "inline", message: "always", seed: true }),
  payloadRef: field(z.boolean().optional(), kept),
  payloadObject: field(z.string().min(1).optional(), kept),
};

/** The current (or last) attempt and how the job ended. */
const run = {
  leaseToken: field(z.string().optional(), { item: true }),
  leaseUntil: field(z.number().optional(), {
    item: true,
    view: (until, item) =>
      item.status === "running" && until !== undefined ? { leaseUntil: iso(until) } : {},
  }),
  startedAt: field(z.number().optional(), { item: true, view: "time" }),
  /** Who runs the current (or last) attempt: "lambda:<function>/<request id>", "pool:<task>", "local:<pid>". */
  runner: field(z.string().optional(), { item: true }),
  /** When the platform stops the current attempt's process (a Lambda's timeout), if it has such a limit. */
  runDeadline: field(z.number().optional(), { item: true }),
  /** Ended attempts, oldest first, at most HISTORY_KEEP (lib/store/attempt-history.ts); shown with the current one. */
  history: field(stored<AttemptRecord[]>().optional(), { item: true, view: (_, item) => historyView(item) }),
  /** Records dropped from `history` to keep the item small (shown with it). */
  historyDropped: field(z.number().optional(), { item: true }),
  finishedAt: field(z.number().optional(), { item: true, view: "time" }),
  cancelRequested: field(z.boolean().optional(), { item: true, view: "same" }),
  /** The result's JSON, or the key of its object in the claims bucket; toJobView is given it loaded. */
  result: field(z.string().optional(), { item: true }),
  resultObject: field(z.string().optional(), { item: true }),
  lastError: field(z.string().optional(), {
    item: true,
    view: (error) => (error !== undefined ? { lastError: error } : {}),
  }),
  /** TTL (epoch seconds) on terminal items. */
  expiresAt: field(z.number().optional(), { item: true }),
  /** Status before the last claim: "running" means a takeover, "missing" a job built from its message. */
  claimedFrom: field(stored<JobStatus | "missing">().optional(), { item: true }),
  /** A reaper (or a redrive) is sending this scheduled job's message; others keep off until then. */
  promotingUntil: field(z.number().optional(), { item: true }),
  /** When a fresh message last went out for it after its enqueue (promotion, the stale-message sweep). */
  resentAt: field(z.number().optional(), { item: true }),
  /** The status index's keys (lib/store/keys.ts indexKeys): a scheduled, parked or finished job's place. */
  gsi1pk: field(z.string().optional(), { item: true }),
  gsi1sk: field(z.string().optional(), { item: true }),
};

/** Groups (docs/architecture.md §15). */
const group = {
  /**
   * A group's child: where its end is recorded (lib/store/group-item.ts Member): the group, its
   * slice, its position there, and the group's slicePartitions (absent for a group created before
   * slices spread), so a child's end finds its slice without reading the group.
   */
  member: field(
    z
      .object({
        g: z.string().min(1),
        s: z.number().int().min(0),
        p: z.number().int().min(0),
        n: z.number().int().min(1).optional(),
      })
      .optional(),
    { item: true, message: "sender", seed: true, view: (m) => (m ? { group: m.g } : {}) },
  ),
  /** A group's completion job: the group it completes. */
  completes: field(z.string().min(1).optional(), { item: true, message: "sender", seed: true, view: "same" }),
  /** Groups this job's handler created (`ctx.group`): a cancel of this job's group reaches them. */
  childGroups: field(stored<Set<string>>().optional(), {
    item: true,
    view: (groups) => (groups?.size ? { childGroups: [...groups].sort() } : {}),
  }),
  /** The group that took over this job's membership in its own group: that group's end records it. */
  handoff: field(z.string().optional(), { item: true }),
};

/** Batch kinds (docs/architecture.md §18). */
const batch = {
  batchKey: field(z.string().min(1).max(256).optional(), kept),
  /** Counted in its key's backlog (maxPendingPerKey) until it ends. */
  inBacklog: field(z.boolean().optional(), kept),
};

/** Debounced and singleton kinds (docs/architecture.md §19). */
const coalesce = {
  /** Its key; its item carries its payload, which a later enqueue of its burst revises. */
  coalesceKey: field(z.string().min(1).optional(), {
    ...kept,
    view: (key, item) => (key !== undefined ? { coalesceKey: key, enqueues: item.enqueues ?? 1 } : {}),
  }),
  /** The enqueues this job answers: 1, and one more for each that joined its burst or replaced its payload. */
  enqueues: field(z.number().optional(), { item: true }),
  /** A collect burst's payloads (JSON), in enqueue order; the first is also `payload`. */
  burst: field(stored<string[]>().optional(), { item: true }),
  burstBytes: field(z.number().optional(), { item: true }),
  /** A singleton job: jobs of its key that must end before it starts. */
  after: field(z.array(z.string().min(1)).max(20).optional(), { ...kept, view: "same" }),
};

/** Flow-controlled kinds (docs/architecture.md §20). */
const flow = {
  flowKey: field(z.string().min(1).optional(), { ...kept, view: "same" }),
  // v3: its other limits' keys and its rates' costs, by limit name; the line it is parked in if not the first's.
  flowKeys: field(z.record(z.string(), z.string().min(1)).optional(), { ...kept, view: "same" }),
  flowCosts: field(z.record(z.string(), z.number().int().min(1)).optional(), kept),
  parkedIn: field(z.string().min(1).optional(), { item: true }),
  /** Waiting for a place among a flow key's runs (`waitingIn`: a later limit's line): its message is gone. */
  parked: field(z.boolean().optional(), {
    item: true,
    view: (parked, { status, parkedIn: limit }) =>
      parked && status === "queued" ? { waitingForKey: true, ...(limit ? { waitingIn: limit } : {}) } : {},
  }),
  rateSlot: field(z.number().optional(), { message: "sender" }), // reserved starts (ms): taken once; §3
  rateSlots: field(z.record(z.string(), z.number()).optional(), { message: "sender" }),
  placeSince: field(z.number().optional(), { message: "sender" }),
};

/** Replays (docs/architecture.md §21): the job it runs again. */
const replay = {
  replayOf: field(z.string().min(1).optional(), { ...kept, view: "same" }),
};

/** Tracing (docs/architecture.md §23): its producer's W3C trace context, `traceparent[;tracestate]`. */
const trace = {
  trace: field(z.string().min(1).max(600).optional(), {
    ...kept,
    view: (t) => (t !== undefined ? { traceparent: t.split(";")[0] } : {}),
  }),
};

/** Durable jobs (docs/architecture.md §22). */
const durable = {
  /** Its recorded steps, by name. */
  steps: field(stored<Record<string, StepRecord>>().optional(), { item: true }),
  /**
   * The version of its kind (lib/job/kind-version.ts) whose run started its journal: set by a
   * record's write when absent, set anew by an onVersionChange "restart", dropped by an operator's resume.
   */
  version: field(z.string().optional(), { item: true, view: "same" }),
  /** A suspended job: what it waits for (a sleep, a token, an event), until when. */
  waiting: field(stored<WaitingRecord>().optional(), {
    item: true,
    view: (w, item) => (w && item.status === "scheduled" ? { waiting: toWaitingView(w) } : {}),
  }),
  /**
   * A child job a durable handler invoked (`ctx.invoke`): its parent's id (j) and queue (q), and the
   * parent's step (s) its end resumes with its outcome (lib/durable/child-jobs.ts).
   */
  parent: field(z.object({ j: z.string().min(1), q: z.string().min(1), s: z.string().min(1) }).optional(), {
    item: true,
    message: "sender",
    seed: true,
    view: (p) => (p ? { parent: { id: p.j, step: p.s } } : {}),
  }),
};

/** The parts, by feature; the map is their union. */
export const JOB_FIELD_PARTS = { job, payload, run, group, batch, coalesce, flow, replay, trace, durable };

export const JOB_FIELDS = {
  ...job,
  ...payload,
  ...run,
  ...group,
  ...batch,
  ...coalesce,
  ...flow,
  ...replay,
  ...trace,
  ...durable,
};

type Fields = typeof JOB_FIELDS;
export type JobFieldName = keyof Fields;

/** The names of the fields whose entry has `place` (set to one of `values`, when given). */
type NamesWith<P extends keyof Field<unknown>, V = unknown> = {
  [K in JobFieldName]: Fields[K] extends { [Q in P]: infer X }
    ? [X] extends [undefined]
      ? never
      : X extends V
        ? K
        : never
    : never;
}[JobFieldName];

export type ItemFieldName = NamesWith<"item">;
export type MessageFieldName = NamesWith<"message">;
export type ResentFieldName = NamesWith<"message", "always">;
export type SeedFieldName = NamesWith<"seed">;

/** The schemas of the named fields, as a zod shape. */
export type FieldShape<K extends JobFieldName> = { [N in K]: Fields[N]["schema"] };
/** The values of the named fields: optional where the schema is. */
export type FieldValues<K extends JobFieldName> = z.output<z.ZodObject<FieldShape<K>>>;

/** The job item, rewritten by every claim and finalize, so it stays small (≤ 1 KB for typical jobs). */
export type JobItem = FieldValues<ItemFieldName>;

/** Everything needed to build the job item from its message if the enqueue died before writing it. */
export type JobSeed = FieldValues<SeedFieldName>;

const iso = (ms: number) => new Date(ms).toISOString();
