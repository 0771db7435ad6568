import type { AbortCause } from "./outcome.ts";

/**
 * The runs in flight in this process, by job id. A cancel that lands in the same process (the local
 * stack, or a pool task serving its own API) aborts at once instead of waiting for the next
 * heartbeat; elsewhere the heartbeat delivers it.
 */
export class RunningJobs {
  private readonly runs = new Map<string, (cause: AbortCause) => void>();

  register(id: string, abort: (cause: AbortCause) => void): () => void {
    this.runs.set(id, abort);
    return () => {
      if (this.runs.get(id) === abort) this.runs.delete(id);
    };
  }

  /** true when the job was running here and has been told to stop. */
  requestCancel(id: string): boolean {
    const abort = this.runs.get(id);
    abort?.("cancelled");
    return abort !== undefined;
  }

  /** Aborts every run in this process with `cause`; the number told. */
  abortAll(cause: AbortCause): number {
    const all = [...this.runs.values()];
    for (const abort of all) abort(cause);
    return all.length;
  }

  get size(): number {
    return this.runs.size;
  }
}
