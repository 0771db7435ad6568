import type { QueueDeclaration } from "../declarations/queue-declaration.ts";
import { ClientError } from "../errors.ts";
import { QUEUE_MESSAGE_RETENTION_SECONDS } from "../limits.ts";
import { retentionExpiry } from "../retention.ts";
import { admitToBacklog, leaveBacklog } from "../store/batch-key-ops.ts";
import type { StoreContext } from "../store/context.ts";
import { releaseUniqueLock } from "../store/enqueue-ops.ts";
import type { Planned } from "./plan.ts";

/**
 * A batch kind's job takes a place in its key's backlog, after its unique key is settled (a
 * duplicate takes none). A full key refuses it: its unique key is freed and nothing else was
 * written (a large payload's object or item expires). The count expires once no job of the key
 * could still be waiting, so a key idle that long starts again from zero.
 */
export async function admitToKeyBacklog(
  store: StoreContext,
  p: Planned,
  queue: QueueDeclaration,
): Promise<void> {
  if (!p.backlog) return;
  const { kind, key, max } = p.backlog;
  const expiresAt = retentionExpiry(p.item.runAt, QUEUE_MESSAGE_RETENTION_SECONDS / 86_400);
  if (await admitToBacklog(store, kind, key, max, expiresAt)) return;
  if (p.message.uniqueKey) await releaseUniqueLock(store, queue.name, p.message.uniqueKey, p.item.id);
  throw new ClientError(
    "key_backlog_full",
    `batch key "${key}" of kind "${kind}" already has ${max} jobs waiting (maxPendingPerKey); retry later`,
  );
}

/** A job whose message could not go out: nothing of it exists, so its unique key and backlog place are freed. */
export async function unwindUnsent(store: StoreContext, p: Planned, queue: QueueDeclaration): Promise<void> {
  if (p.message.uniqueKey) await releaseUniqueLock(store, queue.name, p.message.uniqueKey, p.item.id);
  if (p.backlog) await leaveBacklog(store, p.backlog.kind, p.backlog.key, 1);
}
