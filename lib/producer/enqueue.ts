import { setTimeout } from "node:timers/promises";
import type { Span } from "@opentelemetry/api";
import pLimit from "p-limit";
import { putClaim } from "../claims/claim-store.ts";
import { loadJobView } from "../claims/job-bodies.ts";
import type { QueueDeclaration } from "../declarations/queue-declaration.ts";
import { ClientError, internalErrorBody } from "../errors.ts";
import { coalesceRuleOf } from "../job/coalesce.ts";
import type { BatchResultItem, EnqueueResult } from "../job/schemas.ts";
import { isTerminal } from "../job/status.ts";
import { errorFields } from "../observability/log.ts";
import { endSpan, enqueueSpan, withEnqueueSpan, withTraceOf } from "../observability/tracing.ts";
import { retentionExpiry } from "../retention.ts";
import type { CheckedEnqueue, Engine, EnqueueOptions } from "../services/engine-services.ts";
import { acquireUniqueLock, putJob, putPayload, takeOverUniqueLock } from "../store/enqueue-ops.ts";
import { type JobItem, toJobView } from "../store/job-item.ts";
import { getJob } from "../store/read-ops.ts";
import type { OutgoingJob } from "../transport/outgoing-messages.ts";
import { admitToKeyBacklog, unwindUnsent } from "./backlog-admission.ts";
import { CoalesceEnqueue } from "./coalesce-enqueue.ts";
import { errorBody } from "./error-body.ts";
import { type Planned, plan } from "./plan.ts";
import { validateEnqueue } from "./validate.ts";

export type ProducerDeps = Pick<
  Engine,
  "store" | "claims" | "transport" | "registry" | "queues" | "clock" | "metrics" | "log" | "flow"
> &
  Partial<Pick<Engine, "running">>;

/** A unique key whose job never got written is presumed in flight for this long, then reclaimed. */
const UNIQUE_LOCK_GRACE_MS = 60_000;
/** How long a duplicate waits, look by look, for an in-flight holder's item before answering 409. */
const HOLDER_WAITS_MS = [20, 50, 100, 200, 400];

/**
 * Enqueue: validate, then write in the order that can't lose a job —
 * large payload (its item, or its object in the claims bucket) → unique-key lock → SQS message →
 * job item. A crash after the payload's write leaves only that, and it expires.
 * The message goes first so a crash before the item write still runs the job (the worker builds the
 * item from the message). Scheduled jobs (beyond SQS's 15 min delay) have no message yet: their one
 * write puts them in the scheduled index for the reaper.
 */
export class Producer {
  private readonly coalesce: CoalesceEnqueue;

  constructor(private readonly deps: ProducerDeps) {
    this.coalesce = new CoalesceEnqueue(deps);
  }

  async enqueue(raw: unknown, options: EnqueueOptions = {}): Promise<EnqueueResult> {
    const valid = validateEnqueue(raw, this.deps.registry, this.deps.queues);
    return withEnqueueSpan(valid.kind.name, valid.queue.name, options.job, (job, span) => {
      const planned = plan(valid, this.deps.clock.now(), this.deps.store.layout.indexShards, job);
      span.setAttribute("skyforge.job.id", planned.item.id);
      const rule = valid.coalesceKey === undefined ? undefined : coalesceRuleOf(valid.kind);
      if (rule && valid.coalesceKey !== undefined)
        return this.coalesce.enqueue(planned, valid.queue, rule, valid.coalesceKey);
      return this.enqueueValid(planned, valid.queue, { ...options, job });
    });
  }

  /** Up to 100 requests, each failing alone. `trace`: the caller's W3C context (§23). */
  async enqueueBatch(raws: readonly unknown[], trace?: string): Promise<BatchResultItem[]> {
    const checked = raws.map((raw): CheckedEnqueue | { error: NonNullable<BatchResultItem["error"]> } => {
      try {
        const valid = validateEnqueue(raw, this.deps.registry, this.deps.queues);
        return trace === undefined ? { valid } : { valid, job: { trace } };
      } catch (err) {
        return { error: errorBody(err) };
      }
    });
    return this.enqueuePlanned(checked);
  }

  async enqueueChecked(entries: readonly CheckedEnqueue[]): Promise<BatchResultItem[]> {
    return this.enqueuePlanned(entries);
  }

  /**
   * A batch in three phases, so every message shares SendMessageBatch requests of up to 10, unique
   * keys and large payloads included: the writes that must precede a message (a large payload's
   * item, a unique key's lock), then the sends, then the job items. Each item fails alone.
   */
  private async enqueuePlanned(
    entries: readonly (CheckedEnqueue | { error: NonNullable<BatchResultItem["error"]> })[],
  ): Promise<BatchResultItem[]> {
    const now = this.deps.clock.now();
    const results: BatchResultItem[] = new Array(entries.length);
    const planned: { index: number; planned: Planned; queue: QueueDeclaration; span: Span }[] = [];
    const keyed: { index: number; entry: CheckedEnqueue }[] = [];
    entries.forEach((entry, index) => {
      if ("error" in entry) results[index] = { index, error: entry.error };
      else if (entry.valid.coalesceKey !== undefined) keyed.push({ index, entry });
      else {
        const span = enqueueSpan(entry.valid.kind.name, entry.valid.queue.name, entry.job?.trace);
        const extras = withTraceOf(entry.job, span);
        const p = plan(entry.valid, now, this.deps.store.layout.indexShards, extras);
        span.setAttribute("skyforge.job.id", p.item.id);
        planned.push({ index, planned: p, queue: entry.valid.queue, span });
      }
    });
    const limit = pLimit(16);
    const ready: typeof planned = [];
    await Promise.all(
      planned.map((e) =>
        limit(async () => {
          try {
            const duplicate = await this.reserve(e.planned, e.queue, {});
            if (duplicate) {
              results[e.index] = { index: e.index, id: duplicate.job.id, duplicate: true };
              return;
            }
            await admitToKeyBacklog(this.deps.store, e.planned, e.queue);
            ready.push(e);
          } catch (err) {
            results[e.index] = { index: e.index, error: errorBody(err) };
          }
        }),
      ),
    );
    await this.deps.flow.parkIfKeyFull(ready.map((e) => e.planned));
    // Scheduled jobs have no message yet: the reaper sends it when they fall due. Parked ones wait
    // for a place of their flow key.
    const failedSends = await this.deps.transport.sendBatch(
      ready
        .filter((e) => !e.planned.scheduled && !e.planned.parked)
        .map((e): OutgoingJob => ({ message: e.planned.message, delaySeconds: e.planned.delaySeconds })),
    );
    // Debounced and singleton jobs of one key one at a time, in the request's order (a collect burst
    // keeps it); different keys side by side.
    const byKey = Map.groupBy(keyed, ({ entry }) => `${entry.valid.kind.name}#${entry.valid.coalesceKey}`);
    await Promise.all(
      [...byKey.values()].map((same) =>
        limit(async () => {
          for (const { index, entry } of same)
            results[index] = await this.coalesce.enqueueEntry(index, entry);
        }),
      ),
    );
    await Promise.all(
      ready.map((e) =>
        limit(async () => {
          const { item, scheduled } = e.planned;
          if (failedSends.has(item.id)) {
            // Nothing of the job exists: free its key so that the caller's retry isn't a conflict.
            await unwindUnsent(this.deps.store, e.planned, e.queue);
            results[e.index] = { index: e.index, error: internalErrorBody("could not queue; retry").error };
            return;
          }
          try {
            // Only the outcome matters here, not the item a faster worker may have written.
            if (e.planned.writesItem) await putJob(this.deps.store, item, { readCurrent: false });
          } catch (err) {
            // A scheduled or parked job's item is its only record: the failure is the caller's.
            if (scheduled || e.planned.parked) {
              results[e.index] = { index: e.index, error: errorBody(err) };
              return;
            }
            // The message is out: the worker will build the job from it, so the id is still good.
            this.deps.log.warn("job item write failed after send; the message carries the job", {
              ...errorFields(err),
            });
          }
          this.deps.metrics.count("enqueued", e.queue.name, item.kind);
          results[e.index] = { index: e.index, id: item.id, duplicate: false };
        }),
      ),
    );
    for (const e of planned) endSpan(e.span, results[e.index]?.error?.message);
    const parked = ready.filter((e) => e.planned.parked && results[e.index]?.id !== undefined);
    if (parked.length > 0) await this.deps.flow.lookAfterParkingAll(parked.map((e) => e.planned));
    return results;
  }

  private async enqueueValid(
    p: Planned,
    queue: QueueDeclaration,
    options: EnqueueOptions,
  ): Promise<EnqueueResult> {
    const { transport, metrics } = this.deps;
    const duplicate = await this.reserve(p, queue, options);
    if (duplicate) return duplicate;
    await admitToKeyBacklog(this.deps.store, p, queue);
    await this.deps.flow.parkIfKeyFull([p]);
    if (!p.scheduled && !p.parked) {
      try {
        await transport.send({ message: p.message, delaySeconds: p.delaySeconds });
      } catch (err) {
        // Nothing of the job exists yet: free its unique key so the caller's retry isn't a conflict.
        await unwindUnsent(this.deps.store, p, queue);
        throw err;
      }
    }
    let written: JobItem = p.item;
    try {
      if (p.writesItem) written = await this.writeItem(p);
    } catch (err) {
      // A scheduled or parked job has no message: its item is the only record, so the failure is the caller's.
      if (p.scheduled || p.parked) throw err;
      // The message is out: the worker will build the job from it, so the job is accepted (as in a batch).
      this.deps.log.warn("job item write failed after send; the message carries the job", {
        ...errorFields(err),
      });
      written = p.item;
    }
    metrics.count("enqueued", queue.name, p.item.kind);
    if (p.parked) await this.deps.flow.lookAfterParkingAll([p]);
    return { job: toJobView(written, p.payloadJson), duplicate: false };
  }

  /**
   * The writes that must land before a job's message: its large payload's item or object, then its
   * unique key's lock. result: the job already holding the key (a duplicate), or undefined to go on.
   */
  private async reserve(
    p: Planned,
    queue: QueueDeclaration,
    options: EnqueueOptions,
    tries = 0,
    waits = 0,
  ): Promise<EnqueueResult | undefined> {
    const { store } = this.deps;
    // Both outlive the job: a far-off runAt must not find its payload or its key already expired.
    const lockExpiry = retentionExpiry(p.item.runAt, queue.retentionDays.dead);
    if (tries === 0 && waits === 0) {
      if (p.message.payloadRef) await putPayload(store, p.item.id, p.payloadJson, lockExpiry);
      if (p.message.payloadObject) await putClaim(this.deps.claims, p.message.payloadObject, p.payloadJson);
    }
    const uniqueKey = p.message.uniqueKey;
    if (!uniqueKey) return undefined;
    const unwritten = !p.writesItem;
    const lock = await acquireUniqueLock(
      store,
      queue.name,
      uniqueKey,
      p.item.id,
      lockExpiry,
      p.pendingUntil,
      unwritten,
    );
    if (lock.acquired) return undefined;
    const holder = await getJob(store, lock.holder.jobId);
    if (holder && (options.uniqueKeyScope === "retained" || !isTerminal(holder.status))) {
      return { job: await loadJobView(store, this.deps.claims, holder), duplicate: true };
    }
    // A holder of a lane that writes no item at enqueue is queued until it starts: a duplicate.
    if (!holder && lock.holder.unwritten && this.deps.clock.now() < (lock.holder.pendingUntil ?? 0)) {
      const queued = {
        ...p.item,
        id: lock.holder.jobId,
        createdAt: lock.holder.createdAt,
        status: "queued" as const,
      };
      return { job: toJobView(queued, undefined), duplicate: true };
    }
    // A missing holder may be a delayed message whose item write failed: it still runs at its runAt.
    const pendingSince = Math.max(lock.holder.createdAt, lock.holder.pendingUntil ?? 0);
    if (!holder && this.deps.clock.now() - pendingSince < UNIQUE_LOCK_GRACE_MS) {
      // Most often the holder's enqueue is between its lock and its item write (a batch sends all its
      // messages first): its item lands within milliseconds, so look again a few times first.
      if (waits < HOLDER_WAITS_MS.length) {
        await setTimeout(HOLDER_WAITS_MS[waits]);
        return this.reserve(p, queue, options, tries, waits + 1);
      }
      throw new ClientError(
        "conflict",
        `a job with uniqueKey "${uniqueKey}" is being enqueued right now; retry shortly`,
      );
    }
    const taken = await takeOverUniqueLock(
      store,
      queue.name,
      uniqueKey,
      lock.holder.jobId,
      p.item.id,
      lockExpiry,
      p.pendingUntil,
      unwritten,
    );
    if (taken) return undefined;
    if (tries >= 3) throw new ClientError("conflict", `uniqueKey "${uniqueKey}" is contended; retry`);
    return this.reserve(p, queue, options, tries + 1, waits);
  }

  private async writeItem(p: Planned): Promise<JobItem> {
    const put = await putJob(this.deps.store, p.item);
    // The worker got there first and built the job from the message: report what it is now.
    return put.created ? p.item : (put.current ?? p.item);
  }
}
