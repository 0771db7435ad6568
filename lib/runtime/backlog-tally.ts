import { isTerminal } from "../job/status.ts";
import { leaveBacklog } from "../store/batch-key-ops.ts";
import type { StoreContext } from "../store/context.ts";
import type { JobItem } from "../store/job-item.ts";

/**
 * Jobs of batch keys that ended, counted per key so a whole call leaves its key's backlog in one
 * write (docs/architecture.md §18). Only a job counted in its backlog (`inBacklog`) and ended counts.
 */
export class BacklogTally {
  private readonly ended = new Map<string, { kind: string; key: string; n: number }>();

  note(item: Pick<JobItem, "kind" | "batchKey" | "inBacklog" | "status">): void {
    if (!item.inBacklog || item.batchKey === undefined || !isTerminal(item.status)) return;
    const id = `${item.kind}\u0000${item.batchKey}`;
    const entry = this.ended.get(id) ?? { kind: item.kind, key: item.batchKey, n: 0 };
    entry.n += 1;
    this.ended.set(id, entry);
  }

  /** One write per key; a failed write leaves the count high until the key's count expires. */
  async flush(store: StoreContext): Promise<void> {
    const entries = [...this.ended.values()];
    this.ended.clear();
    await Promise.all(entries.map((e) => leaveBacklog(store, e.kind, e.key, e.n)));
  }
}
