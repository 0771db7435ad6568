import { encodeFlowKey, type FlowKey } from "../job/flow-key.ts";
import {
  batchKeyPartition,
  bufferedEventsPartition,
  coalesceLockPartition,
  eventWaitersPartition,
  flowKeyPartition,
  indexSort,
  parkSort,
} from "../job/key-layout.ts";
import { agedArrival, type Priority } from "../job/priority.ts";
import type { IndexedStatus } from "../job/status.ts";
import { GROUP_INDEX_SHARDS } from "./table.ts";

export const jobKey = (id: string) => ({ pk: `job#${id}`, sk: "job" });
export const payloadKey = (id: string) => ({ pk: `job#${id}`, sk: "payload" });
export const uniqueKeyLock = (queue: string, uniqueKey: string) => ({
  pk: `uniq#${queue}#${uniqueKey}`,
  sk: "uniq",
});
export const queueStateKey = (queue: string) => ({ pk: `queue#${queue}`, sk: "state" });

/** Stable shard for an id (FNV-1a) among `shards`, so a job always lands in the same index partition. */
export function shardOf(id: string, shards: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    h ^= id.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % shards;
}

/** Every index partition of one (queue, status) starts with this; the shard follows. */
export const indexPartitionPrefix = (queue: string, status: IndexedStatus) => `${queue}#${status}#`;

export const indexPartition = (queue: string, status: IndexedStatus, shard: number) =>
  `${indexPartitionPrefix(queue, status)}${shard}`;

/** A job's status-index keys; `shards` is the table layout's indexShards. */
export function indexKeys(queue: string, status: IndexedStatus, id: string, at: number, shards: number) {
  return { gsi1pk: indexPartition(queue, status, shardOf(id, shards)), gsi1sk: indexSort(at, id) };
}

/** All schedules share one partition so a tick lists them with one Query. */
export const SCHEDULES_PARTITION = "schedules";
export const scheduleKey = (name: string) => ({ pk: SCHEDULES_PARTITION, sk: `schedule#${name}` });
/** A leader lease (cron runner) — one small item per lease name. */
export const leaseKey = (name: string) => ({ pk: `lease#${name}`, sk: "lease" });
/**
 * One token bucket per rate-limit scope, and one per (scope, key) when a handler names a key (a
 * scope name has no `#`, so the first one after `rate#` ends it).
 */
export const rateLimitKey = (scope: string, key?: string) => ({
  pk: key === undefined ? `rate#${scope}` : `rate#${scope}#${key}`,
  sk: "bucket",
});

/** A job group's own item: its settings and progress, written once per finished slice. */
export const groupKey = (id: string) => ({ pk: `group#${id}`, sk: "group" });
/**
 * A group's slice. Each child's end writes its slice, so a group whose children end at the app's
 * whole rate spreads its slices over `partitions` partition keys (the group item's slicePartitions,
 * from the table layout: docs/guide/scale.md). A group created before that keeps them in its own partition
 * (partitions undefined), where one Query reads them.
 */
export const sliceKey = (groupId: string, slice: number, partitions: number | undefined) => ({
  pk: partitions === undefined ? `group#${groupId}` : `gslice#${groupId}#${slice % partitions}`,
  sk: `slice#${String(slice).padStart(7, "0")}`,
});
/**
 * Unfinished groups sit in the status index under their own partitions (queue names start with a
 * letter, so `~group#…` names no queue), sorted by when the reaper should look at them next.
 */
export const groupIndexPartition = (shard: number) => `~group#${shard}`;
export function groupIndexKeys(id: string, checkAt: number) {
  return { gsi1pk: groupIndexPartition(shardOf(id, GROUP_INDEX_SHARDS)), gsi1sk: indexSort(checkAt, id) };
}

/*
 * The keys below hold a key computed from a payload, or an event's name and match: their layouts
 * live in lib/job/key-layout.ts, where the enqueue check measures them (storedKeyProblem).
 */

/**
 * A batch kind's key (docs/architecture.md §18): its count of waiting jobs, and its call permits
 * (the sort key keeps its stored `slot#` prefix: items already written stay readable).
 */
export const batchBacklogKey = (kind: string, key: string) => ({
  pk: batchKeyPartition(kind, key),
  sk: "backlog",
});
export const batchCallPermitKey = (kind: string, key: string, permit: number) => ({
  pk: batchKeyPartition(kind, key),
  sk: `slot#${permit}`,
});

/**
 * A debounced or singleton kind's key (docs/architecture.md §19): its lock names the job that an
 * enqueue of the key joins, or waits behind.
 */
export const coalesceLockKey = (kind: string, key: string) => ({
  pk: coalesceLockPartition(kind, key),
  sk: "coalesce",
});

/**
 * A flow key's state (docs/architecture.md §20): the jobs holding its places, and its cool-down.
 * Its waiting jobs sit in the status index under `~park#<shard>`, sorted by kind, key, then arrival
 * aged by priority (parkSort: the key is URI-encoded there, so no key's entries run into another's).
 */
export const flowKeyStateKey = (fk: FlowKey) => ({ pk: flowKeyPartition(fk), sk: "state" });
export const PARK_INDEX_SHARDS = 8;
export const parkPartition = (shard: number) => `~park#${shard}`;
/** A flow key's parked line is in one shard of the parked index: its text's. */
export const parkShard = (fk: FlowKey) => shardOf(encodeFlowKey(fk), PARK_INDEX_SHARDS);
/** A parked job's place in its key's line: by its enqueue time aged by its priority, then its id. */
export function parkIndexKeys(fk: FlowKey, job: { createdAt: number; id: string; priority?: Priority }) {
  return {
    gsi1pk: parkPartition(parkShard(fk)),
    gsi1sk: parkSort(fk, agedArrival(job.createdAt, job.priority), job.id),
  };
}

/**
 * Where the reaper's look at the parked index (lib/flow/flow-heal.ts) stopped last: the next run goes
 * on from there, so every waiting key is looked at in turn however many there are.
 */
export const flowHealCursorKey = { pk: "cursor#flow-heal", sk: "cursor" } as const;

/** A durable job's wait token (docs/architecture.md §22): its state, secret's hash and data. */
export const tokenKey = (id: string) => ({ pk: `tok#${id}`, sk: "token" });
/**
 * The jobs waiting for an event of a name and match value: one item each under the pair's partition
 * (both URI-encoded, so no pair's partition runs into another's), which POST /events queries.
 */
export const eventWaiterKey = (event: string, match: string, jobId: string) => ({
  pk: eventWaitersPartition(event, match),
  sk: jobId,
});
/**
 * An event POST /events keeps for its lookback: under its pair's partition, sorted by when it came
 * (then its id), so a wait reads those since a time in one query.
 */
export const bufferedEventKey = (event: string, match: string, at: number, id: string) => ({
  pk: bufferedEventsPartition(event, match),
  sk: indexSort(at, id),
});

/**
 * The access pattern a partition key belongs to, named for people (the scale model in
 * bench/heat-meter.ts groups DynamoDB traffic by it, docs/guide/scale.md gives each one's ceiling). Every
 * key this file builds has one; an index partition is a status-index, group-index or parked-job
 * shard. A flow key's rate bucket (`rate#flow:…`, lib/job/flow-key.ts flowRateBucket) is told from a
 * declared scope's: a shared flow rate (`() => "llm"`) is one item every job of the kind reserves on.
 */
export function partitionPattern(partition: string, onIndex: boolean): string {
  if (onIndex)
    return partition.startsWith("~group#")
      ? "group index shard"
      : partition.startsWith("~park#")
        ? "parked-job index shard"
        : "status index shard";
  if (partition === SCHEDULES_PARTITION) return "schedules";
  if (partition.startsWith(FLOW_RATE_PREFIX)) return "flow rate bucket";
  const prefix = partition.slice(0, partition.indexOf("#") + 1);
  return TABLE_PATTERNS[prefix] ?? `unknown (${prefix || partition})`;
}

/** rateLimitKey's partition for flowRateBucket's scope, `flow:<kind>[!<limit>]`. */
const FLOW_RATE_PREFIX = rateLimitKey("flow:").pk;

const TABLE_PATTERNS: Readonly<Record<string, string>> = {
  "job#": "job item",
  "uniq#": "unique-key lock",
  "queue#": "queue state",
  "lease#": "leader lease",
  "rate#": "rate-limit bucket",
  "group#": "group item",
  "gslice#": "group slices",
  "bkey#": "batch key",
  "coal#": "coalesce lock",
  "fkey#": "flow key state",
  "tok#": "wait token",
  "evt#": "event waiters",
  "evb#": "buffered events",
  "cursor#": "reaper cursor",
};
