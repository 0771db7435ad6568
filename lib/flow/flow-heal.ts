import { type FlowKey, flowKeyFields, parkedLineOf } from "../job/flow-key.ts";
import { parkPrefix } from "../job/key-layout.ts";
import { errorFields } from "../observability/log.ts";
import { type HealCursor, moveHealCursor, readHealCursor } from "../store/flow-heal-cursor-ops.ts";
import type { JobItem } from "../store/job-item.ts";
import { PARK_INDEX_SHARDS } from "../store/keys.ts";
import { nextParkedJob } from "../store/parked-line-ops.ts";
import { healKey, type PlaceDeps } from "./flow-places.ts";

/**
 * How long one reaper run looks at waiting keys, at most (by the injected clock): the reaper's
 * function has 50 s, and its other passes come first. The next run goes on where this one stopped.
 */
export const FLOW_HEAL_BUDGET_MS = 15_000;

export interface HealCounts {
  /** Waiting keys looked at this run. */
  keys: number;
  /** Parked jobs sent on. */
  sent: number;
}

/** A position in the parked index: a shard, and the sort key to go on after in it. */
type Position = { shard: number; after: string };

/**
 * The reaper's look at every flow key with parked jobs (docs/architecture.md §20): a place left
 * held by a run that ended without handing it on (a crash between its finalize and the hand-over),
 * or handed to a job whose message then went missing, comes back, and free places go to the first
 * parked jobs of each line. Each waiting key is visited once: one Query per key. A run goes on from
 * where the last one stopped (a cursor item, one conditional write a run) for up to `budgetMs`, once
 * round the index at most, so a key far along it is reached however many keys wait before it.
 */
export async function healParkedKeys(
  deps: PlaceDeps,
  budgetMs: number = FLOW_HEAL_BUDGET_MS,
): Promise<HealCounts> {
  const { store, clock } = deps;
  const started = clock.now();
  const cursor = await readHealCursor(store);
  const counts: HealCounts = { keys: 0, sent: 0 };
  const start: Position = { shard: cursor.shard % PARK_INDEX_SHARDS, after: cursor.after };
  let at: Position = start;
  // Shards entered: the start shard from the cursor on, each other shard, then the start shard's
  // beginning up to the cursor (the keys before it in that shard).
  for (let entered = 0; entered <= PARK_INDEX_SHARDS; ) {
    if (clock.now() - started >= budgetMs) return stopAt(deps, cursor, at, counts);
    const job = await nextParkedJob(store, at.shard, at.after);
    const past = job === undefined ? undefined : pastLine(job);
    const lapped = entered === PARK_INDEX_SHARDS && (past === undefined || past > start.after);
    if (job === undefined || past === undefined || lapped) {
      entered += 1;
      at = { shard: (at.shard + 1) % PARK_INDEX_SHARDS, after: "" };
      continue;
    }
    at = { shard: at.shard, after: past };
    const fk = parkedLineOf(job);
    if (fk === undefined) continue;
    counts.keys += 1;
    counts.sent += await healOne(deps, fk);
  }
  // Once round: the next run starts where this one did.
  return counts;
}

/** The sort key just past a parked job's whole line (its key's prefix + U+FFFF), or past it alone. */
function pastLine(job: JobItem): string | undefined {
  const fk = parkedLineOf(job);
  return fk === undefined ? job.gsi1sk : `${parkPrefix(fk)}\uffff`;
}

async function healOne(deps: PlaceDeps, fk: FlowKey): Promise<number> {
  return healKey(deps, fk).catch((error: unknown) => {
    deps.log.warn("could not look at a flow key's places", { ...flowKeyFields(fk), ...errorFields(error) });
    return 0;
  });
}

/** Out of time: the next run goes on from `at`. A run that overlapped and moved it first wins. */
async function stopAt(deps: PlaceDeps, read: HealCursor, at: Position, counts: HealCounts) {
  if (at.shard !== read.shard || at.after !== read.after)
    await moveHealCursor(deps.store, read, at, deps.clock.now());
  return counts;
}
