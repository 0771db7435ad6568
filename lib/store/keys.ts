import type { IndexedStatus } from "../job/status.ts";
import { INDEX_SHARDS } from "./table.ts";

export const jobKey = (id: string) => ({ pk: `job#${id}`, sk: "job" });
export const payloadKey = (id: string) => ({ pk: `job#${id}`, sk: "payload" });
export const uniqueKeyLock = (queue: string, uniqueKey: string) => ({
  pk: `uniq#${queue}#${uniqueKey}`,
  sk: "uniq",
});
export const queueStateKey = (queue: string) => ({ pk: `queue#${queue}`, sk: "state" });

/** Stable shard for an id (FNV-1a), so a job always lands in the same index partition. */
export function shardOf(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    h ^= id.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % INDEX_SHARDS;
}

export const indexPartition = (queue: string, status: IndexedStatus, shard: number) =>
  `${queue}#${status}#${shard}`;

/** Index sort key: time first so a shard reads in due/finish order. */
export const indexSort = (at: number, id: string) => `${String(at).padStart(15, "0")}#${id}`;

export function indexKeys(queue: string, status: IndexedStatus, id: string, at: number) {
  return { gsi1pk: indexPartition(queue, status, shardOf(id)), gsi1sk: indexSort(at, id) };
}

/** All schedules share one partition so a tick lists them with one Query. */
export const SCHEDULES_PARTITION = "schedules";
export const scheduleKey = (name: string) => ({ pk: SCHEDULES_PARTITION, sk: `schedule#${name}` });
/** A leader lease (cron runner) — one small item per lease name. */
export const leaseKey = (name: string) => ({ pk: `lease#${name}`, sk: "lease" });
/** One token bucket per rate-limit scope. */
export const rateLimitKey = (scope: string) => ({ pk: `rate#${scope}`, sk: "bucket" });

/** A job group and its slices share one partition, so a group reads with one Query. */
export const groupKey = (id: string) => ({ pk: `group#${id}`, sk: "group" });
export const sliceKey = (groupId: string, slice: number) => ({
  pk: `group#${groupId}`,
  sk: `slice#${String(slice).padStart(7, "0")}`,
});
/**
 * Unfinished groups sit in the status index under their own partitions (queue names start with a
 * letter, so `~group#…` names no queue), sorted by when the reaper should look at them next.
 */
export const groupIndexPartition = (shard: number) => `~group#${shard}`;
export function groupIndexKeys(id: string, checkAt: number) {
  return { gsi1pk: groupIndexPartition(shardOf(id)), gsi1sk: indexSort(checkAt, id) };
}

/**
 * A batch kind's key (docs/architecture.md §18): its count of waiting jobs, and its call permits
 * (the sort key keeps its stored `slot#` prefix: items already written stay readable).
 */
export const batchBacklogKey = (kind: string, key: string) => ({ pk: `bkey#${kind}#${key}`, sk: "backlog" });
export const batchCallPermitKey = (kind: string, key: string, permit: number) => ({
  pk: `bkey#${kind}#${key}`,
  sk: `slot#${permit}`,
});
