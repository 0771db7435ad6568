/** One job's hand-over of its place in a key (lib/flow/hand-over.ts). */
export interface HandOverEntry {
  id: string;
  /** The job gives its place back to wait (not because its run ended). */
  waiting: boolean;
}

/**
 * A key's hand-over: `first`'s, and `joiners()`, called once just before its write, the entries that
 * came meanwhile, whose places it hands on in the same write.
 */
export type HandOver = (first: HandOverEntry, joiners: () => HandOverEntry[]) => Promise<void>;

/**
 * Entries joined into one hand-over at most: its write's condition names two paths a place (about
 * 130 characters with a ULID), and DynamoDB refuses an expression over 4 KB. The rest wait a turn.
 */
const MOST_JOINED = 15;

interface Queued {
  entry: HandOverEntry;
  run: HandOver;
  done: () => void;
}

/**
 * The hand-overs of one flow key in this process take turns, and those that come while one runs
 * join it. Runs of a key that start together (one delivery's batch, one pool) end together, and two
 * hand-overs of the key that overlap both read the same first waiting job: one pass is refused, a
 * write DynamoDB bills, and the delay rarely parts the two, as their next jobs are received together
 * again. In turn, a hand-over reads the key's state after the last one's write; joined, two places
 * change hands in one write. Another process's hand-overs of the key still race (the pass's
 * condition keeps that correct). A hand-over never fails (it logs, and the reaper repairs), so the
 * next always runs.
 */
export class HandOverTurns {
  /** Per key with a hand-over running: the entries waiting for their turn (or to join it). */
  private readonly queued = new Map<string, Queued[]>();

  /** Resolves once `entry`'s place was handed on: by `run` in its turn, or by a hand-over it joined. */
  take(key: string, entry: HandOverEntry, run: HandOver): Promise<void> {
    return new Promise((done) => {
      const waiting = this.queued.get(key);
      if (waiting) waiting.push({ entry, run, done });
      else void this.turns(key, { entry, run, done });
    });
  }

  private async turns(key: string, first: Queued): Promise<void> {
    const waiting: Queued[] = [];
    this.queued.set(key, waiting);
    for (let next: Queued | undefined = first; next; next = waiting.shift()) {
      const joined: Queued[] = [];
      // A hand-over logs its own failures; were one to throw, the key's other entries still go on.
      await next
        .run(next.entry, () => {
          joined.push(...waiting.splice(0, MOST_JOINED));
          return joined.map((q) => q.entry);
        })
        .catch(() => undefined);
      next.done();
      for (const q of joined) q.done();
    }
    this.queued.delete(key);
  }
}
