import { setTimeout } from "node:timers/promises";
import type { QueueDeclaration } from "../declarations/queue-declaration.ts";
import { ClientError } from "../errors.ts";
import {
  burstRunAt,
  type CoalesceRule,
  coalesceRuleOf,
  leadingBurstOpen,
  MAX_COLLECT_BYTES,
  MAX_COLLECT_ITEMS,
  maxDelayMs,
} from "../job/coalesce.ts";
import type { BatchResultItem, EnqueueResult } from "../job/schemas.ts";
import { isTerminal } from "../job/status.ts";
import { errorFields } from "../observability/log.ts";
import { longestRetentionExpiry, retentionExpiry } from "../retention.ts";
import type { CheckedEnqueue, Engine } from "../services/engine-services.ts";
import {
  appendToBurst,
  type CoalesceLock,
  extendLeadingBurst,
  readCoalesceLock,
  reviseWaitingJob,
  takeCoalesceLock,
} from "../store/coalesce-ops.ts";
import { putJob } from "../store/enqueue-ops.ts";
import { deleteWaiterOfEnded } from "../store/event-waiter-ops.ts";
import { cancel } from "../store/finalize-ops.ts";
import { type JobItem, toJobView } from "../store/job-item.ts";
import { getJob } from "../store/read-ops.ts";
import { errorBody } from "./error-body.ts";
import { type Planned, plan } from "./plan.ts";

export type CoalesceDeps = Pick<Engine, "store" | "transport" | "queues" | "clock" | "metrics" | "log"> &
  Partial<Pick<Engine, "running">>;

/**
 * A job whose lock is taken but whose item isn't written yet is its enqueue in flight: looked at
 * again after these waits, then taken to be a crash once the lock is this old.
 */
const IN_FLIGHT_WAITS_MS = [20, 50, 100, 200, 400];
const IN_FLIGHT_GRACE_MS = 60_000;
/** Enqueues that keep losing the lock to others give up with a 409 after this many looks. */
const MAX_LOOKS = 8;
/** At most this many jobs of a singleton key are waited for (the message carries them). */
const MAX_AFTER = 20;

/** What joining the lock's job came to. */
type Joined = EnqueueResult | "closed" | "in-flight";

/**
 * An enqueue of a debounced or singleton kind (docs/architecture.md §19): it joins the job its
 * key's lock names while that job's burst is open (or, queue-one, while it waits), and otherwise
 * starts a new job and moves the lock to it. Writes in the order that answers no id that won't run:
 * the lock (naming the new id), the message, the item; a crash after the lock leaves a lock whose
 * job never comes, which a later enqueue takes over once IN_FLIGHT_GRACE_MS has passed.
 */
export class CoalesceEnqueue {
  constructor(private readonly deps: CoalesceDeps) {}

  async enqueue(
    p: Planned,
    queue: QueueDeclaration,
    rule: CoalesceRule,
    key: string,
  ): Promise<EnqueueResult> {
    const { store, clock } = this.deps;
    let waits = 0;
    for (let look = 0; look < MAX_LOOKS + waits; look++) {
      const now = clock.now();
      const lock = await readCoalesceLock(store, p.item.kind, key);
      const joined = lock ? await this.join(lock, p, rule, key, now) : "closed";
      if (joined === "in-flight") {
        if (waits >= IN_FLIGHT_WAITS_MS.length) break;
        await setTimeout(IN_FLIGHT_WAITS_MS[waits++]);
        continue;
      }
      if (joined !== "closed") return joined;
      const created = await this.start(p, queue, rule, key, lock);
      if (created) return created;
    }
    throw new ClientError(
      "conflict",
      `kind "${p.item.kind}" key "${key}" is being enqueued by others right now; retry shortly`,
    );
  }

  /** One debounced or singleton job of a batch: a group's child or completion can't be one. */
  async enqueueEntry(index: number, { valid, job }: CheckedEnqueue): Promise<BatchResultItem> {
    try {
      if (job?.member || job?.completes)
        throw new ClientError(
          "validation_error",
          `kind "${valid.kind.name}" debounces or is a singleton: it can't be a group's child or completion job`,
        );
      const rule = coalesceRuleOf(valid.kind);
      if (!rule || valid.coalesceKey === undefined)
        throw new ClientError("validation_error", "not a keyed kind");
      const p = plan(valid, this.deps.clock.now(), this.deps.store.layout.indexShards, job);
      const answer = await this.enqueue(p, valid.queue, rule, valid.coalesceKey);
      return {
        index,
        id: answer.job.id,
        duplicate: answer.duplicate,
        ...(answer.debounced ? { debounced: true } : {}),
      };
    } catch (err) {
      return { index, error: errorBody(err) };
    }
  }

  /** Joins the lock's job if its burst is open (or it waits, queue-one); says why not otherwise. */
  private async join(
    lock: CoalesceLock,
    p: Planned,
    rule: CoalesceRule,
    key: string,
    now: number,
  ): Promise<Joined> {
    const { store } = this.deps;
    const id = lock.jobId;
    let joined: JobItem | undefined;
    if (rule.type === "debounce" && rule.mode === "leading") {
      if (!leadingBurstOpen(lock.firstAt, lock.lastAt, now, rule.settings)) return "closed";
      const extended = await extendLeadingBurst(
        store,
        p.item.kind,
        key,
        id,
        now,
        rule.settings.periodSeconds * 1000,
        maxDelayMs(rule.settings),
      );
      if (!extended) return "closed";
      // The leading job already runs (or ran): its view as it is, or as enqueued if not yet written.
      joined = (await getJob(store, id)) ?? { ...p.item, id, createdAt: lock.firstAt };
    } else if (rule.type === "debounce") {
      const runAt = burstRunAt(lock.firstAt, now, rule.settings);
      // The enqueue's own start deadline (if any) counts from where the burst's run moves.
      const within = p.item.startBy === undefined ? undefined : p.item.startBy - p.item.runAt;
      const move = { runAt, ...(within !== undefined ? { startBy: runAt + within } : {}) };
      joined =
        rule.mode === "collect"
          ? await appendToBurst(store, id, p.payloadJson, now, move, {
              maxItems: MAX_COLLECT_ITEMS,
              maxBytes: MAX_COLLECT_BYTES,
            })
          : await reviseWaitingJob(store, id, p.payloadJson, now, move);
    } else if (rule.mode === "queue-one") {
      joined = await reviseWaitingJob(store, id, p.payloadJson, now);
    }
    if (joined) {
      this.deps.metrics.count("debounced", joined.queue, joined.kind);
      return { job: toJobView(joined), duplicate: true, debounced: true };
    }
    if (rule.type === "debounce" && rule.mode === "leading") return "closed";
    // Not joined: the job started, ended or closed its burst, or its enqueue is still writing it.
    const holder = await getJob(store, id);
    if (!holder && now - lock.firstAt < IN_FLIGHT_GRACE_MS) return "in-flight";
    return "closed";
  }

  /**
   * A new job for the key: the lock moves to it (from the job the caller saw, if any), then its
   * message and item go out. A singleton's new job waits for the key's jobs that haven't ended;
   * cancel-running cancels them. result: undefined when another enqueue moved the lock first.
   */
  private async start(
    p: Planned,
    queue: QueueDeclaration,
    rule: CoalesceRule,
    key: string,
    lock: CoalesceLock | undefined,
  ): Promise<EnqueueResult | undefined> {
    const { store, transport, metrics } = this.deps;
    // Only a singleton waits for the job the lock named: a debounce's new burst owes it nothing.
    const previous = lock && rule.type === "singleton" ? await getJob(store, lock.jobId) : undefined;
    const after = await this.unended(previous);
    const expiresAt = retentionExpiry(p.item.runAt, queue.retentionDays.dead);
    // The burst starts when its job was made (its createdAt, from which its runAt was planned).
    const mine: CoalesceLock = { jobId: p.item.id, firstAt: p.item.createdAt, lastAt: p.item.createdAt };
    if (!(await takeCoalesceLock(store, p.item.kind, key, mine, lock?.jobId, expiresAt))) return undefined;
    const item: JobItem = { ...p.item, ...(after.length ? { after } : {}) };
    const message = { ...p.message, ...(after.length ? { after } : {}) };
    try {
      await transport.send({ message, delaySeconds: p.delaySeconds });
    } catch (err) {
      // Nothing of the job exists: the lock goes back to the job it named, so no one joins a ghost.
      if (lock)
        await takeCoalesceLock(store, p.item.kind, key, lock, p.item.id, expiresAt).catch(() => false);
      throw err;
    }
    let written = item;
    try {
      const put = await putJob(store, item);
      if (!put.created && put.current) written = put.current;
    } catch (err) {
      this.deps.log.warn("job item write failed after send; the message carries the job", errorFields(err));
    }
    if (rule.type === "singleton" && rule.mode === "cancel-running") await this.cancelAll(after);
    metrics.count("enqueued", queue.name, p.item.kind);
    return { job: toJobView(written), duplicate: false };
  }

  /**
   * The jobs of a singleton key that may still run, newest first: the job the lock named and those
   * it waited for, less any that ended (or never got written).
   */
  private async unended(previous: JobItem | undefined): Promise<string[]> {
    if (!previous) return [];
    const candidates = [previous, ...(await this.items(previous.after ?? []))];
    return candidates
      .filter((job) => !isTerminal(job.status))
      .map((job) => job.id)
      .slice(0, MAX_AFTER);
  }

  private async items(ids: readonly string[]): Promise<JobItem[]> {
    const found = await Promise.all(ids.map((id) => getJob(this.deps.store, id)));
    return found.filter((job): job is JobItem => job !== undefined);
  }

  /** cancel-running: each earlier job ends cancelled (queued) or has its run aborted (running). */
  private async cancelAll(ids: readonly string[]): Promise<void> {
    const { store, clock, queues, running } = this.deps;
    const ttl = longestRetentionExpiry(clock.now(), queues);
    for (const id of ids) {
      const result = await cancel(store, id, ttl).catch((err: unknown) => {
        // The new job still waits for it: a cancel lost here only lets the old run finish.
        this.deps.log.warn("could not cancel an earlier job of a singleton key", { id, ...errorFields(err) });
        return undefined;
      });
      if (result?.outcome === "requested") running?.requestCancel(id);
      // One cancelled while it waited for an event: its pointer goes with the wait (§22).
      if (result?.outcome === "cancelled")
        await deleteWaiterOfEnded(store, result.item).catch((err: unknown) =>
          // A pointer left here resumes nothing: the next event on its pair takes it away.
          this.deps.log.warn("could not delete a cancelled job's event waiter", { id, ...errorFields(err) }),
        );
    }
  }
}
