import { ulid } from "ulid";
import { claimKey, needsClaimCheck } from "../claims/claim-keys.ts";
import { isBatchKind } from "../job/batch.ts";
import { coalesceRuleOf } from "../job/coalesce.ts";
import { writesAtEnqueue } from "../job/lanes.ts";
import { MAX_DELAY_SECONDS, QUEUE_MESSAGE_RETENTION_SECONDS } from "../limits.ts";
import { retentionExpiry } from "../retention.ts";
import type { JobExtras } from "../services/engine-services.ts";
import { itemFields, messageFields } from "../store/job-field-copies.ts";
import { INLINE_PAYLOAD_BYTES, type JobItem } from "../store/job-item.ts";
import { indexKeys, jobKey } from "../store/keys.ts";
import { STORED_FORMATS } from "../store/stored-formats.ts";
import { type TaggedJob, taggedJob } from "../store/tag-entries.ts";
import type { JobMessage } from "../transport/job-message.ts";
import type { ValidRequest } from "./validate.ts";

/**
 * One enqueue worked out before anything is written: the job's item and message, when it runs, and
 * what must be written ahead of its message (a large payload, a unique key, a backlog place).
 */
export interface Planned {
  item: JobItem;
  message: JobMessage;
  delaySeconds: number;
  scheduled: boolean;
  payloadJson: string;
  /** The enqueue writes the job item: fenced jobs, and every scheduled job (it has no message yet). */
  writesItem: boolean;
  /** Until then a missing job item is expected (the unique-key lock's grace). */
  pendingUntil: number;
  /** A batch kind's key with a bound on its waiting jobs: the job takes a place in its backlog. */
  backlog?: { kind: string; key: string; max: number };
  /** Its part of the tag index, written ahead of its message (none for a job without tags). */
  tagged?: TaggedJob;
  /**
   * Its flow key was full at enqueue: the job's item is written parked in the key's line and no
   * message goes out until a place frees (lib/flow/flow-park.ts, through Engine.flow).
   */
  parked?: boolean;
}

/** `indexShards`: the table layout's (a job due past SQS's delay enters the status index). */
export function plan(v: ValidRequest, now: number, indexShards: number, extras: JobExtras = {}): Planned {
  const { request, kind, queue, payloadJson, batchKey, coalesceKey, flowKey, flowKeys, flowCosts } = v;
  const maxPending =
    batchKey !== undefined && isBatchKind(kind) ? kind.batch.settings.maxPendingPerKey : undefined;
  const rule = coalesceKey === undefined ? undefined : coalesceRuleOf(kind);
  // A trailing or collect burst runs a period after its first enqueue unless a later one joins it.
  const burstWait =
    rule?.type === "debounce" && rule.mode !== "leading" ? rule.settings.periodSeconds * 1000 : 0;
  const requested = request.runAt
    ? Date.parse(request.runAt)
    : now + (request.delaySeconds ?? 0) * 1000 + burstWait;
  const runAt = Math.max(now, requested);
  // A debounced or singleton job is never in the scheduled index: its runAt moves with its burst,
  // and a message that comes early is hidden again until then (lib/runtime/claim-delivery.ts).
  const delaySeconds = Math.min(
    Math.ceil((runAt - now) / 1000),
    rule ? MAX_DELAY_SECONDS : Number.MAX_SAFE_INTEGER,
  );
  const scheduled = delaySeconds > MAX_DELAY_SECONDS;
  const id = extras.id ?? ulid(now);
  const lane = kind.lane ?? "fenced";
  const bytes = Buffer.byteLength(payloadJson);
  // Kept as long as a job's key: a far-off runAt must not find its payload already expired.
  const keepUntil = retentionExpiry(runAt, queue.retentionDays.dead) * 1000;
  const payloadObject = needsClaimCheck(payloadJson) ? claimKey(id, "payload", now, keepUntil) : undefined;
  // A debounced or singleton job's payload stays in its item, where a later enqueue revises it.
  const large = !payloadObject && !rule && bytes > INLINE_PAYLOAD_BYTES;
  // Counted from when the job is due, so a delayed job's deadline starts with its delay's end.
  const startWithinSeconds = request.startWithinSeconds ?? kind.startWithinSeconds;
  const startBy = startWithinSeconds === undefined ? undefined : runAt + startWithinSeconds * 1000;
  // The job's fields; the map of a job's fields (lib/store/job-fields.ts) says which of them its
  // message carries and its item stores.
  const fields = {
    id,
    kind: kind.name,
    queue: queue.name,
    maxAttempts: request.maxAttempts ?? kind.maxAttempts,
    priority: request.priority ?? "normal",
    createdAt: now,
    runAt,
    timeoutSeconds: request.timeoutSeconds,
    startBy,
    uniqueKey: request.uniqueKey,
    // Each tag once, in the order given (the same tag twice would index the job twice).
    tags: request.tags ? [...new Set(request.tags)] : undefined,
    lane: lane === "fenced" ? undefined : lane,
    ...(payloadObject ? { payloadObject } : { payload: payloadJson, payloadRef: large }),
    // Where the job comes from: its group, the group it completes, the job it replays, its trace.
    member: extras.member,
    completes: extras.completes,
    replayOf: extras.replayOf,
    parent: extras.parent,
    trace: extras.trace,
    batchKey,
    inBacklog: maxPending !== undefined,
    ...(rule ? { coalesceKey, enqueues: 1 } : {}),
    ...(rule?.mode === "collect" ? { burst: [payloadJson], burstBytes: bytes } : {}),
    flowKey,
    flowKeys,
    flowCosts,
  };
  const message: JobMessage = { v: STORED_FORMATS.message, ...messageFields(fields) };
  const item: JobItem = {
    ...jobKey(id),
    status: scheduled ? "scheduled" : "queued",
    attempts: 0,
    ...itemFields(fields),
    ...(scheduled ? indexKeys(queue.name, "scheduled", id, runAt, indexShards) : {}),
  };
  const writesItem = scheduled || writesAtEnqueue(lane);
  // A job with no item until it starts may wait in SQS as long as SQS keeps a message.
  const pendingUntil = writesItem ? runAt : runAt + QUEUE_MESSAGE_RETENTION_SECONDS * 1000;
  const backlog =
    batchKey !== undefined && maxPending !== undefined
      ? { kind: kind.name, key: batchKey, max: maxPending }
      : undefined;
  return {
    item,
    message,
    delaySeconds,
    scheduled,
    payloadJson,
    writesItem,
    pendingUntil,
    tagged: taggedJob(item, Math.floor(keepUntil / 1000)),
    ...(backlog ? { backlog } : {}),
  };
}
