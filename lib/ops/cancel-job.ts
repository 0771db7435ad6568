import { decodeTime } from "ulid";
import { InvalidItemState, ItemNotFound, ItemTooLarge } from "../errors.ts";
import { QUEUE_MESSAGE_RETENTION_SECONDS } from "../limits.ts";
import { longestRetentionExpiry } from "../retention.ts";
import { BacklogTally } from "../runtime/backlog-tally.ts";
import type { Engine } from "../services/engine-services.ts";
import { deleteWaiterOfEnded } from "../store/event-waiter-ops.ts";
import { type CancelResult, cancel, tombstone } from "../store/finalize-ops.ts";
import type { JobItem } from "../store/job-item.ts";
import { endOversized } from "../store/oversized-ops.ts";
import { getJob } from "../store/read-ops.ts";
import { childrenAwaited } from "../store/step-record.ts";

export type CancelJobResult =
  | CancelResult
  /** No item existed: a tombstone now makes the job's claim lose, if a message for it is on its way. */
  | { outcome: "tombstoned"; item: CancelResult["item"] };

/** Clock skew allowed between the id's time and ours. */
const FUTURE_SKEW_MS = 60_000;

/**
 * A user's cancel (docs/architecture.md §4, §16). A job with no item may be a lean job still queued,
 * whose item only its claim writes: when the id is a ULID from within SQS's message retention, a
 * tombstone is written (one write, paid by that cancel alone) and the claim finds it cancelled.
 * Older or future ids name no job that can still run: not found.
 */
export async function cancelJob(
  engine: Pick<Engine, "store" | "queues" | "clock" | "running" | "groups" | "durable"> &
    Partial<Pick<Engine, "realtime">>,
  id: string,
): Promise<CancelJobResult> {
  const { store, clock } = engine;
  const ttl = longestRetentionExpiry(clock.now(), engine.queues);
  try {
    const result: CancelResult & { steps?: JobItem["steps"] } = await cancel(store, id, ttl).catch(
      (err: unknown) => {
        if (err instanceof ItemTooLarge) return cancelOversized(engine, id, ttl, err);
        throw err;
      },
    );
    if (result.outcome === "requested") engine.running.requestCancel(result.item.id);
    // A queued child ended here, not in a worker: its group hears of it now.
    if (result.outcome === "cancelled") {
      engine.realtime?.ended(result.item);
      // A job cancelled while it waited for an event: its pointer goes with the wait (§22).
      await deleteWaiterOfEnded(store, result.item);
      await engine.groups.recordEnd(result.item);
      // A child a durable handler invoked: its waiting parent resumes, with ChildJobError (§22).
      await engine.durable.childEnded(result.item);
      // A parent waiting for its children: they are cancelled too, and theirs in turn.
      await cancelChildren(engine, { steps: result.item.steps ?? result.steps });
      // A batch key's queued job leaves its key's backlog: its message will be dropped unrun.
      const tally = new BacklogTally();
      tally.note(result.item);
      await tally.flush(store);
    }
    return result;
  } catch (err) {
    if (!(err instanceof ItemNotFound) || !mayStillBeQueued(id, clock.now())) throw err;
    const item = await tombstone(store, id, ttl);
    // An item appeared in between (its claim, or a late enqueue write): cancel that one.
    return item ? { outcome: "tombstoned", item } : cancelJob(engine, id);
  }
}

/**
 * The cancel of a job whose item is at DynamoDB's 400 KB limit, where the cancel's own write was
 * refused: the job ends cancelled with its steps map dropped (endOversized), which always fits. Its
 * steps as they were are returned beside it, so the children it waited for are cancelled too.
 */
async function cancelOversized(
  engine: Pick<Engine, "store">,
  id: string,
  expiresAt: number,
  refused: ItemTooLarge,
): Promise<CancelResult & { steps?: JobItem["steps"] }> {
  const before = await getJob(engine.store, id);
  if (!before) throw new ItemNotFound(`job ${id} not found`);
  const end = { as: "cancelled" as const, error: refused.message, expiresAt };
  const item = await endOversized(engine.store, before, end);
  return { outcome: "cancelled", item, ...(before.steps ? { steps: before.steps } : {}) };
}

/**
 * Cancels the children a cancelled durable job invoked and had not seen end (§22). One that ended
 * meanwhile (InvalidItemState) or never got an item is left as it is.
 */
async function cancelChildren(
  engine: Parameters<typeof cancelJob>[0],
  parent: Pick<JobItem, "steps">,
): Promise<void> {
  for (const id of childrenAwaited(parent.steps)) {
    try {
      await cancelJob(engine, id);
    } catch (err) {
      if (!(err instanceof InvalidItemState) && !(err instanceof ItemNotFound)) throw err;
    }
  }
}

function mayStillBeQueued(id: string, now: number): boolean {
  let created: number;
  try {
    created = decodeTime(id);
  } catch {
    return false;
  }
  return created <= now + FUTURE_SKEW_MS && now - created <= QUEUE_MESSAGE_RETENTION_SECONDS * 1000;
}
