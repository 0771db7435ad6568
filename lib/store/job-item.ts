import type { JobView } from "../job/schemas.ts";
import type { JobStatus } from "../job/status.ts";
import { type AttemptRecord, historyView } from "./attempt-history.ts";
import type { Member } from "./group-item.ts";
import { type StepRecord, toWaitingView, type WaitingRecord } from "./step-record.ts";
import { checkFormat } from "./stored-formats.ts";

/**
 * The mutable job item, rewritten by every claim and finalize, so it stays small (≤ 1 KB for typical
 * jobs): times are epoch ms, payload and result are JSON strings. A payload over
 * INLINE_PAYLOAD_BYTES lives in its own immutable item (`payloadRef`), and a payload or result over
 * the claim check's threshold in the claims bucket (`payloadObject`, `resultObject`: lib/claims/).
 */
export interface JobItem {
  pk: string;
  sk: string;
  id: string;
  kind: string;
  queue: string;
  status: JobStatus;
  attempts: number;
  maxAttempts: number;
  priority: "normal" | "critical";
  timeoutSeconds?: number;
  /** The start deadline (ms): runAt + startWithinSeconds. A claim after it ends the job dead, unrun. */
  startBy?: number;
  createdAt: number;
  runAt: number;
  payload?: string;
  payloadRef?: boolean;
  /** The key of the payload's object in the claims bucket. */
  payloadObject?: string;
  uniqueKey?: string;
  leaseToken?: string;
  leaseUntil?: number;
  startedAt?: number;
  /** Who runs the current (or last) attempt: "lambda:<function>/<request id>", "pool:<task>", "local:<pid>". */
  runner?: string;
  /** When the platform stops the current attempt's process (a Lambda's timeout), if it has such a limit. */
  runDeadline?: number;
  /** Ended attempts, oldest first, at most HISTORY_KEEP (lib/store/attempt-history.ts). */
  history?: AttemptRecord[];
  /** Records dropped from `history` to keep the item small. */
  historyDropped?: number;
  finishedAt?: number;
  cancelRequested?: boolean;
  result?: string;
  /** The key of the result's object in the claims bucket. */
  resultObject?: string;
  lastError?: string;
  /** TTL (epoch seconds) on terminal items. */
  expiresAt?: number;
  /** Status before the last claim: "running" means a takeover, "missing" a job built from its message. */
  claimedFrom?: JobStatus | "missing";
  /** A reaper (or a redrive) is sending this scheduled job's message; others keep off until then. */
  promotingUntil?: number;
  /** When a fresh message last went out for it after its enqueue (promotion, the stale-message sweep). */
  resentAt?: number;
  /** A group's child: its membership, recorded when the job ends (docs/architecture.md §15). */
  member?: Member;
  /** A group's completion job: the group it completes. */
  completes?: string;
  /** Groups this job's handler created (`ctx.group`): a cancel of this job's group reaches them. */
  childGroups?: Set<string>;
  /** The group that took over this job's membership in its own group: that group's end records it. */
  handoff?: string;
  /** A batch kind's job: its key (docs/architecture.md §18). */
  batchKey?: string;
  /** Counted in its key's backlog (maxPendingPerKey) until it ends. */
  inBacklog?: boolean;
  /** A debounced or singleton kind's job: its key (docs/architecture.md §19). */
  coalesceKey?: string;
  /** The enqueues this job answers: 1, and one more for each that joined its burst or replaced its payload. */
  enqueues?: number;
  /** A collect burst's payloads (JSON), in enqueue order; the first is also `payload`. */
  burst?: string[];
  burstBytes?: number;
  /** Jobs of its singleton key that must end before it starts. */
  after?: string[];
  /** A replay's job: the job it runs again (docs/architecture.md §21). */
  replayOf?: string;
  /** Its producer's W3C trace context, `traceparent[;tracestate]` (docs/architecture.md §23). */
  trace?: string;
  /** A flow-controlled kind's job: its flow key (docs/architecture.md §20). */
  flowKey?: string;
  /** Waiting for a place among its flow key's runs: its message is gone until one frees (§20). */
  parked?: boolean;
  /** A durable job's recorded steps, by name (docs/architecture.md §22). */
  steps?: Record<string, StepRecord>;
  /** A suspended durable job: what it waits for (a sleep, a token, an event), until when. */
  waiting?: WaitingRecord;
  gsi1pk?: string;
  gsi1sk?: string;
  /** The item's format version (lib/store/stored-formats.ts), written with the item; absent: 1. */
  fv?: number;
}

/** A success's result as the store records it: its JSON in the item, or the key of its claims object. */
export type StoredResult = { json: string } | { object: string };

/** The item attribute a stored result becomes. */
export const resultFields = (r: StoredResult): Pick<JobItem, "result" | "resultObject"> =>
  "json" in r ? { result: r.json } : { resultObject: r.object };

/** Payloads at or under this size stay inline; larger ones go to a separate immutable item. */
export const INLINE_PAYLOAD_BYTES = 400;

const iso = (ms: number) => new Date(ms).toISOString();

/** The public view of a job, given its payload and result JSON (loaded when stored elsewhere). */
export function toJobView(
  item: JobItem,
  payloadJson: string | undefined = item.payload,
  resultJson: string | undefined = item.result,
): JobView {
  checkFormat("job", item, `job ${item.id}`);
  return {
    id: item.id,
    kind: item.kind,
    queue: item.queue,
    status: item.status,
    attempts: item.attempts,
    maxAttempts: item.maxAttempts,
    payload: payloadJson === undefined ? null : JSON.parse(payloadJson),
    createdAt: iso(item.createdAt),
    runAt: iso(item.runAt),
    ...(item.startBy !== undefined ? { startBy: iso(item.startBy) } : {}),
    priority: item.priority,
    ...(resultJson !== undefined ? { result: JSON.parse(resultJson) } : {}),
    ...(item.lastError !== undefined ? { lastError: item.lastError } : {}),
    ...(item.startedAt !== undefined ? { startedAt: iso(item.startedAt) } : {}),
    ...(item.status === "running" && item.leaseUntil !== undefined
      ? { leaseUntil: iso(item.leaseUntil) }
      : {}),
    ...(item.finishedAt !== undefined ? { finishedAt: iso(item.finishedAt) } : {}),
    ...(item.uniqueKey !== undefined ? { uniqueKey: item.uniqueKey } : {}),
    ...(item.cancelRequested ? { cancelRequested: true } : {}),
    ...(item.coalesceKey !== undefined
      ? { coalesceKey: item.coalesceKey, enqueues: item.enqueues ?? 1 }
      : {}),
    ...(item.after?.length ? { after: item.after } : {}),
    ...(item.flowKey !== undefined ? { flowKey: item.flowKey } : {}),
    ...(item.replayOf !== undefined ? { replayOf: item.replayOf } : {}),
    ...(item.trace !== undefined ? { traceparent: item.trace.split(";")[0] } : {}),
    ...(item.member ? { group: item.member.g } : {}),
    ...(item.completes ? { completes: item.completes } : {}),
    ...(item.childGroups?.size ? { childGroups: [...item.childGroups].sort() } : {}),
    ...(item.parked && item.status === "queued" ? { waitingForKey: true } : {}),
    ...(item.waiting && item.status === "scheduled" ? { waiting: toWaitingView(item.waiting) } : {}),
    ...historyView(item),
  };
}

/** Everything needed to build the job item from its message if the enqueue died before writing it. */
export type JobSeed = Pick<
  JobItem,
  | "id"
  | "kind"
  | "queue"
  | "maxAttempts"
  | "priority"
  | "createdAt"
  | "runAt"
  | "timeoutSeconds"
  | "startBy"
  | "uniqueKey"
  | "member"
  | "completes"
  | "batchKey"
  | "inBacklog"
  | "coalesceKey"
  | "after"
  | "flowKey"
  | "replayOf"
  | "trace"
> & { payload?: string; payloadRef?: boolean; payloadObject?: string };
