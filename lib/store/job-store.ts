import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { Clock } from "../clock.ts";
import { type ConflictOptions, createStoreContext, type StoreContext } from "./context.ts";
import {
  acquireUniqueLock,
  markQueued,
  putJob,
  putPayload,
  releaseUniqueLock,
  takeOverUniqueLock,
} from "./enqueue-ops.ts";
import { cancel, type Finalization, finalize, redrive } from "./finalize-ops.ts";
import type { JobItem } from "./job-item.ts";
import { claim, heartbeat, type JobSeed } from "./lease-ops.ts";
import { coolDown, getQueueState, type QueueState, setQueueConfig } from "./queue-state.ts";
import { getJob, type ListFilter, listJobs, loadPayload } from "./read-ops.ts";
import { beginPromotion, deadLetter, queryIndexBefore } from "./reaper-ops.ts";

/** The store's operations bound to one table; each operation's contract is on its function. */
export class JobStore {
  readonly ctx: StoreContext;
  constructor(client: DynamoDBClient, table: string, clock: Clock) {
    this.ctx = createStoreContext(client, table, clock);
  }

  putJob = (item: JobItem, options?: ConflictOptions) => putJob(this.ctx, item, options);
  putPayload = (id: string, payloadJson: string, expiresAt: number) =>
    putPayload(this.ctx, id, payloadJson, expiresAt);
  acquireUniqueLock = (
    queue: string,
    uniqueKey: string,
    jobId: string,
    expiresAt: number,
    pendingUntil?: number,
  ) => acquireUniqueLock(this.ctx, queue, uniqueKey, jobId, expiresAt, pendingUntil);
  takeOverUniqueLock = (
    queue: string,
    uniqueKey: string,
    previousJobId: string,
    jobId: string,
    expiresAt: number,
    pendingUntil?: number,
  ) => takeOverUniqueLock(this.ctx, queue, uniqueKey, previousJobId, jobId, expiresAt, pendingUntil);
  releaseUniqueLock = (queue: string, uniqueKey: string, jobId: string) =>
    releaseUniqueLock(this.ctx, queue, uniqueKey, jobId);
  markQueued = (id: string, runAt: number) => markQueued(this.ctx, id, runAt);
  claim = (seed: JobSeed, token: string, leaseMs: number) => claim(this.ctx, seed, token, leaseMs);
  heartbeat = (id: string, token: string, leaseMs: number) => heartbeat(this.ctx, id, token, leaseMs);
  finalize = (job: { id: string; queue: string }, token: string, f: Finalization) =>
    finalize(this.ctx, job, token, f);
  cancel = (id: string, expiresAt: number) => cancel(this.ctx, id, expiresAt);
  redrive = (job: { id: string; queue: string }, holdUntil: number) => redrive(this.ctx, job, holdUntil);
  queryIndexBefore = (
    partition: { queue: string; status: "scheduled" | "dead"; shard: number },
    before: number,
    limit: number,
    startKey?: Record<string, unknown>,
  ) => queryIndexBefore(this.ctx, partition, before, limit, startKey);
  beginPromotion = (id: string, runAt: number, holdUntil: number) =>
    beginPromotion(this.ctx, id, runAt, holdUntil);
  deadLetter = (seed: JobSeed, reason: string, expiresAt: number) =>
    deadLetter(this.ctx, seed, reason, expiresAt);
  getJob = (id: string) => getJob(this.ctx, id);
  loadPayload = (item: JobItem) => loadPayload(this.ctx, item);
  listJobs = (filter: ListFilter) => listJobs(this.ctx, filter);
  getQueueState = (queue: string) => getQueueState(this.ctx, queue);
  coolDown = (queue: string, until: number) => coolDown(this.ctx, queue, until);
  setQueueConfig = (queue: string, attrs: Omit<QueueState, "cooldownUntil" | "updatedAt">) =>
    setQueueConfig(this.ctx, queue, attrs);
}
