import type { AbortCause } from "../job/kind.ts";

/**
 * The runs in flight in this process, by job id. A cancel that lands in the same process (the local
 * stack) aborts at once instead of waiting for the next heartbeat; elsewhere the heartbeat delivers
 * it. A stopping pool closes the registry, which aborts every run, even one that registers later.
 */
export class RunningJobs {
  private readonly runs = new Map<string, (cause: AbortCause) => void>();
  private closedWith: AbortCause | undefined;

  register(id: string, abort: (cause: AbortCause) => void): () => void {
    if (this.closedWith) {
      abort(this.closedWith);
      return () => {};
    }
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

  /** Aborts every run in this process with `cause`, now and for any run that registers later; the number told now. */
  close(cause: AbortCause): number {
    this.closedWith = cause;
    const all = [...this.runs.values()];
    for (const abort of all) abort(cause);
    return all.length;
  }

  get size(): number {
    return this.runs.size;
  }
}
