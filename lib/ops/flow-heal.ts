import { parkPrefix } from "../job/key-layout.ts";
import { errorFields } from "../observability/log.ts";
import { healKey, type PlaceDeps } from "../runtime/flow-places.ts";
import { PARK_INDEX_SHARDS } from "../store/keys.ts";
import { nextParkedJob } from "../store/parked-line-ops.ts";

/** Keys one reaper run looks at, at most (the rest wait for the next minute). */
const MAX_KEYS_PER_RUN = 200;

/**
 * The reaper's look at every flow key with parked jobs (docs/architecture.md §20): a place left
 * held by a run that ended without handing it on (a crash between its finalize and the hand-over),
 * or handed to a job whose message then went missing, comes back, and free places go to the
 * oldest parked jobs. Each waiting key is visited once: one Query per key. result: jobs sent.
 */
export async function healParkedKeys(deps: PlaceDeps): Promise<number> {
  let sent = 0;
  let keys = 0;
  for (let shard = 0; shard < PARK_INDEX_SHARDS && keys < MAX_KEYS_PER_RUN; shard++) {
    let after = "";
    for (;;) {
      const job = await nextParkedJob(deps.store, shard, after);
      if (!job?.flowKey || keys >= MAX_KEYS_PER_RUN) break;
      keys++;
      after = `${parkPrefix(job.kind, job.flowKey)}\uffff`;
      sent += await healKey(deps, job.kind, job.flowKey).catch((error: unknown) => {
        deps.log.warn("could not look at a flow key's places", {
          kind: job.kind,
          flowKey: job.flowKey,
          ...errorFields(error),
        });
        return 0;
      });
    }
  }
  return sent;
}
