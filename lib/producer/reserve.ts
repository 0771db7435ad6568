import { setTimeout } from "node:timers/promises";
import { putClaim } from "../claims/claim-store.ts";
import { loadJobView } from "../claims/job-bodies.ts";
import type { QueueDeclaration } from "../declarations/queue-declaration.ts";
import { ClientError } from "../errors.ts";
import type { EnqueueResult } from "../job/schemas.ts";
import { isTerminal } from "../job/status.ts";
import { retentionExpiry } from "../retention.ts";
import type { EnqueueOptions } from "../services/engine-services.ts";
import { acquireUniqueLock, putPayload, takeOverUniqueLock } from "../store/enqueue-ops.ts";
import { toJobView } from "../store/job-item.ts";
import { getJob } from "../store/read-ops.ts";
import type { Planned } from "./plan.ts";
import type { Submission, WriteOrderDeps } from "./submission.ts";

/** A unique key whose job never got written is presumed in flight for this long, then reclaimed. */
const UNIQUE_LOCK_GRACE_MS = 60_000;
/** How long a duplicate waits, look by look, for the item of the key's holder before answering 409. */
const HOLDER_WAITS_MS = [20, 50, 100, 200, 400];

/**
 * The writes that must land before a job's message: its large payload's item or object, then its
 * key: a unique key's lock, or (its kind debounces or is a singleton: the coalescing branch) its
 * coalesce key's lock, which may join the job it names instead. result: the job that already has
 * the key (a duplicate, or the job joined), or undefined to go on.
 */
export async function reserve(deps: WriteOrderDeps, entry: Submission): Promise<EnqueueResult | undefined> {
  const { planned: p, queue } = entry;
  // Both outlive the job: a far-off runAt must not find its payload or its key already expired.
  const lockExpiry = retentionExpiry(p.item.runAt, queue.retentionDays.dead);
  if (p.message.payloadRef) await putPayload(deps.store, p.item.id, p.payloadJson, lockExpiry);
  if (p.message.payloadObject) await putClaim(deps.claims, p.message.payloadObject, p.payloadJson);
  if (entry.target) {
    const reserved = await deps.coalesce.reserve(p, queue, entry.target);
    if ("joined" in reserved) return reserved.joined;
    entry.taken = reserved.taken;
    return undefined;
  }
  return lockUniqueKey(deps, p, queue, entry.uniqueKeyScope, lockExpiry);
}

/** A unique key's lock for the job. result: the job already holding it (a duplicate), or undefined. */
async function lockUniqueKey(
  deps: WriteOrderDeps,
  p: Planned,
  queue: QueueDeclaration,
  scope: EnqueueOptions["uniqueKeyScope"],
  lockExpiry: number,
  tries = 0,
  waits = 0,
): Promise<EnqueueResult | undefined> {
  const { store } = deps;
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
  if (holder && (scope === "retained" || !isTerminal(holder.status))) {
    return { job: await loadJobView(store, deps.claims, holder), duplicate: true };
  }
  // A holder of a lane that writes no item at enqueue is queued until it starts: a duplicate.
  if (!holder && lock.holder.unwritten && deps.clock.now() < (lock.holder.pendingUntil ?? 0)) {
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
  if (!holder && deps.clock.now() - pendingSince < UNIQUE_LOCK_GRACE_MS) {
    // Most often the holder's enqueue is between its lock and its item write (a batch sends all its
    // messages first): its item lands within milliseconds, so look again a few times first.
    if (waits < HOLDER_WAITS_MS.length) {
      await setTimeout(HOLDER_WAITS_MS[waits]);
      return lockUniqueKey(deps, p, queue, scope, lockExpiry, tries, waits + 1);
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
  return lockUniqueKey(deps, p, queue, scope, lockExpiry, tries + 1, waits);
}
