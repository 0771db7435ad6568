import { randomBytes } from "node:crypto";
import { ulid } from "ulid";
import type { Clock } from "../../lib/clock.ts";
import type { StoreContext } from "../../lib/store/context.ts";
import { putJob } from "../../lib/store/enqueue-ops.ts";
import { cancel, finalize } from "../../lib/store/finalize-ops.ts";
import type { JobItem, JobSeed } from "../../lib/store/job-item.ts";
import { jobKey } from "../../lib/store/keys.ts";
import { claim } from "../../lib/store/lease-ops.ts";
import { seedFromMessage } from "../../lib/transport/job-message.ts";
import { messageFromItem } from "../../lib/transport/message-from-item.ts";

/** A new echo job's fields as the store and the API both show them: queued, not tried yet. */
export const NEW_ECHO_JOB = {
  kind: "echo",
  queue: "default",
  status: "queued",
  attempts: 0,
  maxAttempts: 3,
} as const;

/** A queued echo job due now, as the producer would write it (no message sent). */
export function queuedItem(clock: Clock, overrides: Partial<JobItem> = {}): JobItem {
  const now = clock.now();
  const id = overrides.id ?? ulid(now);
  return {
    ...jobKey(id),
    id,
    ...NEW_ECHO_JOB,
    priority: "normal",
    createdAt: now,
    runAt: now,
    payload: JSON.stringify({ id }),
    ...overrides,
  };
}

export const seedOf = (item: JobItem): JobSeed =>
  seedFromMessage(messageFromItem(item, item.payload ?? "null"));

/** Writes the item and claims it: running under a fresh lease. */
export async function runningJob(
  store: StoreContext,
  item: JobItem,
  leaseMs = 60_000,
): Promise<{ item: JobItem; token: string }> {
  const put = await putJob(store, item);
  if (!put.created) throw new Error(`job ${item.id} already exists`);
  const token = randomBytes(12).toString("base64url");
  const claimed = await claim(store, seedOf(item), token, leaseMs);
  if (!claimed.claimed) throw new Error(`could not claim ${item.id}`);
  return { item: claimed.item, token };
}

/** Drives a fresh item through the store to a terminal status, the way the worker and API do. */
export async function finishedJob(
  store: StoreContext,
  item: JobItem,
  status: "done" | "dead" | "cancelled",
  expiresAt: number,
): Promise<JobItem> {
  if (status === "cancelled") {
    const put = await putJob(store, item);
    if (!put.created) throw new Error(`job ${item.id} already exists`);
    return (await cancel(store, item.id, expiresAt)).item;
  }
  const { token } = await runningJob(store, item);
  const result = await finalize(
    store,
    item,
    token,
    status === "done"
      ? { outcome: "done", result: { json: JSON.stringify("ok") }, expiresAt }
      : { outcome: "dead", error: "boom", expiresAt },
  );
  if (!result.finalized) throw new Error(`could not finalize ${item.id}: ${result.reason}`);
  return result.item;
}
