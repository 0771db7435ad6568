import { setTimeout } from "node:timers/promises";
import type { QueueDeclaration } from "../declarations/queue-declaration.ts";
import { ClientError } from "../errors.ts";
import {
  burstRunAt,
  type CoalesceRule,
  leadingBurstOpen,
  MAX_COLLECT_BYTES,
  MAX_COLLECT_ITEMS,
  maxDelayMs,
} from "../job/coalesce.ts";
import type { EnqueueResult } from "../job/schemas.ts";
import { retentionExpiry } from "../retention.ts";
import type { CoalesceTarget, KeyedJob, KeyLockTaken } from "../services/coalesce-service.ts";
import {
  appendToBurst,
  type CoalesceLock,
  extendLeadingBurst,
  readCoalesceLock,
  reviseWaitingJob,
  takeCoalesceLock,
} from "../store/coalesce-ops.ts";
import { type JobItem, toJobView } from "../store/job-item.ts";
import { getJob } from "../store/read-ops.ts";
import type { CoalesceDeps } from "./coalesce-deps.ts";
import { unendedJobs } from "./earlier-jobs.ts";

/**
 * A job whose lock is taken but whose item isn't written yet is its enqueue in flight: looked at
 * again after these waits, then taken to be a crash once the lock is this old.
 */
const IN_FLIGHT_WAITS_MS = [20, 50, 100, 200, 400];
const IN_FLIGHT_GRACE_MS = 60_000;
/** Enqueues that keep losing the lock to others give up with a 409 after this many looks. */
const MAX_LOOKS = 8;

/** What joining the lock's job came to. */
type Joined = EnqueueResult | "closed" | "in-flight";

/**
 * The reserve stage of a debounced or singleton enqueue (docs/architecture.md §19): it joins the
 * job its key's lock names while that job's burst is open (or, queue-one, while it waits), and
 * otherwise moves the lock to the new job, which then goes on through the enqueue's write order
 * (message, item). A crash after the lock leaves a lock whose job never comes, which a later
 * enqueue takes over once IN_FLIGHT_GRACE_MS has passed.
 */
export async function reserveKey(
  deps: CoalesceDeps,
  job: KeyedJob,
  queue: QueueDeclaration,
  target: CoalesceTarget,
): Promise<{ joined: EnqueueResult } | { taken: KeyLockTaken }> {
  const { store, clock } = deps;
  const kind = job.item.kind;
  let waits = 0;
  for (let look = 0; look < MAX_LOOKS + waits; look++) {
    const now = clock.now();
    const lock = await readCoalesceLock(store, kind, target.key);
    const joined = lock ? await join(deps, lock, job, target, now) : "closed";
    if (joined === "in-flight") {
      if (waits >= IN_FLIGHT_WAITS_MS.length) break;
      await setTimeout(IN_FLIGHT_WAITS_MS[waits++]);
      continue;
    }
    if (joined !== "closed") return { joined };
    const taken = await takeKey(deps, job, queue, target, lock);
    if (taken) return { taken };
  }
  throw new ClientError(
    "conflict",
    `kind "${kind}" key "${target.key}" is being enqueued by others right now; retry shortly`,
  );
}

/** The new job's message could not go out: the lock goes back to the job it named, so no one joins a ghost. */
export async function giveKeyBack(deps: CoalesceDeps, taken: KeyLockTaken): Promise<void> {
  const { previous, kind, target, mine, expiresAt } = taken;
  if (previous)
    await takeCoalesceLock(deps.store, kind, target.key, previous, mine.jobId, expiresAt).catch(() => false);
}

/** Joins the lock's job if its burst is open (or it waits, queue-one); says why not otherwise. */
async function join(
  deps: CoalesceDeps,
  lock: CoalesceLock,
  job: KeyedJob,
  { rule, key }: CoalesceTarget,
  now: number,
): Promise<Joined> {
  const { store } = deps;
  const { item, payloadJson } = job;
  const id = lock.jobId;
  let joined: JobItem | undefined;
  if (rule.type === "debounce" && rule.mode === "leading") {
    if (!leadingBurstOpen(lock.firstAt, lock.lastAt, now, rule.settings)) return "closed";
    const extended = await extendLeadingBurst(
      store,
      item.kind,
      key,
      id,
      now,
      rule.settings.periodSeconds * 1000,
      maxDelayMs(rule.settings),
    );
    if (!extended) return "closed";
    // The leading job already runs (or ran): its view as it is, or as enqueued if not yet written.
    joined = (await getJob(store, id)) ?? { ...item, id, createdAt: lock.firstAt };
  } else if (rule.type === "debounce") {
    const runAt = burstRunAt(lock.firstAt, now, rule.settings);
    // The enqueue's own start deadline (if any) counts from where the burst's run moves.
    const within = item.startBy === undefined ? undefined : item.startBy - item.runAt;
    const move = { runAt, ...(within !== undefined ? { startBy: runAt + within } : {}) };
    joined =
      rule.mode === "collect"
        ? await appendToBurst(store, id, payloadJson, now, move, {
            maxItems: MAX_COLLECT_ITEMS,
            maxBytes: MAX_COLLECT_BYTES,
          })
        : await reviseWaitingJob(store, id, payloadJson, now, move);
  } else if (rule.mode === "queue-one") {
    joined = await reviseWaitingJob(store, id, payloadJson, now);
  }
  if (joined) {
    deps.metrics.count("debounced", joined.queue, joined.kind);
    return { job: toJobView(joined), duplicate: true, debounced: true };
  }
  if (rule.type === "debounce" && rule.mode === "leading") return "closed";
  // Not joined: the job started, ended or closed its burst, or its enqueue is still writing it.
  const named = await getJob(store, id);
  if (!named && now - lock.firstAt < IN_FLIGHT_GRACE_MS) return "in-flight";
  return "closed";
}

/**
 * A new job for the key: the lock moves to it (from the job the caller saw, if any). A singleton's
 * new job waits for the key's jobs that haven't ended (its item and message carry them as
 * `after`). result: undefined when another enqueue moved the lock first.
 */
async function takeKey(
  deps: CoalesceDeps,
  job: KeyedJob,
  queue: QueueDeclaration,
  target: CoalesceTarget,
  lock: CoalesceLock | undefined,
): Promise<KeyLockTaken | undefined> {
  const { store } = deps;
  const { item } = job;
  const rule: CoalesceRule = target.rule;
  // Only a singleton waits for the job the lock named: a debounce's new burst owes it nothing.
  const previousJob = lock && rule.type === "singleton" ? await getJob(store, lock.jobId) : undefined;
  const after = await unendedJobs(store, previousJob);
  const expiresAt = retentionExpiry(item.runAt, queue.retentionDays.dead);
  // The burst starts when its job was made (its createdAt, from which its runAt was planned).
  const mine: CoalesceLock = { jobId: item.id, firstAt: item.createdAt, lastAt: item.createdAt };
  if (!(await takeCoalesceLock(store, item.kind, target.key, mine, lock?.jobId, expiresAt))) return undefined;
  if (after.length) {
    job.item = { ...job.item, after };
    job.message = { ...job.message, after };
  }
  return { target, kind: item.kind, mine, ...(lock ? { previous: lock } : {}), expiresAt, after };
}
