import pLimit from "p-limit";
import { ClientError } from "../errors.ts";
import { concurrencyFor } from "../job/flow.ts";
import { type FlowKey, parkedLineOf } from "../job/flow-key.ts";
import type { BusiestKeys, BusyKey } from "../job/flow-views.ts";
import { parkPrefix } from "../job/key-layout.ts";
import type { AnyKind } from "../job/kind.ts";
import { readFlowKeyState } from "../store/flow-key-ops.ts";
import { PARK_INDEX_SHARDS } from "../store/keys.ts";
import { countParked, nextParkedJob } from "../store/parked-line-ops.ts";
import { limitOfKey, livePlaces, type PlaceDeps } from "./flow-places.ts";

/** Keys one listing looks at, at most: the rest of the parked index is left unread. */
export const MAX_KEYS_LOOKED_AT = 200;
/** Keys counted at once (each count is one or more COUNT Queries of the key's line). */
const COUNTS_AT_ONCE = 8;

export type BusiestKeysDeps = PlaceDeps;

/**
 * busiestKeys — the flow keys of a queue with the most parked jobs (docs/architecture.md §20).
 * input: a queue's name (a declared queue, else a 404 `not_found`), how many keys to answer (1..50).
 * reads: the parked index, shard by shard, visiting each waiting key once as the reaper's heal does
 *   (one Query per key, skipping past its line; one more to step over each other kind's lines met),
 *   at most MAX_KEYS_LOOKED_AT keys; a COUNT of each key's line (countParked); then the state item
 *   of each key answered (readFlowKeyState) for its places held. Nothing is written.
 * scope: keys of the kinds whose home queue (the kind's `queue`) is this one and that declare `flow`;
 *   a job enqueued onto another queue is counted under its kind's home queue.
 * result: keys with at least one parked job, by `waiting` descending (then kind, then key); a key
 *   whose line emptied between the walk and its count is left out. The counts are read one key
 *   after another, not at one instant: a snapshot of a moving line, good for a console.
 */
export async function busiestKeys(deps: BusiestKeysDeps, queue: string, limit: number): Promise<BusiestKeys> {
  if (!deps.queues.some((q) => q.name === queue))
    throw new ClientError("not_found", `queue ${queue} is not declared`);
  const kinds = new Map<string, AnyKind>();
  for (const kind of deps.registry.values())
    if (kind.flow && kind.queue === queue) kinds.set(kind.name, kind);
  if (kinds.size === 0) return { items: [] };

  const counting = pLimit(COUNTS_AT_ONCE);
  const counted: Promise<{ fk: FlowKey; waiting: number; since: number }>[] = [];
  let truncated = false;
  for (let shard = 0; shard < PARK_INDEX_SHARDS && !truncated; shard++) {
    let after = "";
    for (;;) {
      const job = await nextParkedJob(deps.store, shard, after);
      if (!job) break;
      const fk = parkedLineOf(job);
      if (!kinds.has(job.kind) || fk === undefined) {
        // Another queue's kind: step over all its lines in this shard ("#" sorts before any character
        // of a kind's name, and "!" before "#", so `<kind>#\uffff` ends exactly that kind's lines,
        // its first limit's and its others', lib/job/flow-key.ts).
        after = fk === undefined && job.gsi1sk ? job.gsi1sk : `${job.kind}#\uffff`;
        continue;
      }
      if (counted.length >= MAX_KEYS_LOOKED_AT) {
        truncated = true;
        break;
      }
      after = `${parkPrefix(fk)}\uffff`;
      // A line is in aged order (lib/job/priority.ts): its first job, the one the walk meets, has
      // waited the longest but for priorities: at most 4 steps less than the line's oldest job.
      const since = Math.max(job.createdAt, job.runAt);
      counted.push(counting(async () => ({ fk, since, waiting: await countParked(deps.store, fk) })));
    }
  }

  const top = (await Promise.all(counted))
    .filter((k) => k.waiting > 0)
    .sort((a, b) => b.waiting - a.waiting || byKindThenKey(a.fk, b.fk))
    .slice(0, limit);
  const items = await Promise.all(
    top.map(async ({ fk, waiting, since }): Promise<BusyKey> => {
      const state = await readFlowKeyState(deps.store, fk);
      const limit = limitOfKey(deps, fk);
      const concurrency = limit ? concurrencyFor(limit.settings, fk.key) : undefined;
      return {
        kind: fk.kind,
        key: fk.key,
        ...(fk.limit !== undefined ? { limit: fk.limit } : {}),
        running: await livePlaces(deps, fk, state, deps.clock.now()),
        waiting,
        ...(typeof concurrency === "number" ? { concurrency } : {}),
        oldestWaitingSince: new Date(since).toISOString(),
      };
    }),
  );
  return { items, ...(truncated ? { truncated: true as const } : {}) };
}

const byKindThenKey = (a: FlowKey, b: FlowKey) =>
  a.kind.localeCompare(b.kind) || (a.limit ?? "").localeCompare(b.limit ?? "") || a.key.localeCompare(b.key);
