import type { PoolKindSpec } from "../declarations/pool-kind.ts";
import type { JobMessage } from "../transport/job-message.ts";

/** A received message waiting for a child; it is not claimed yet. */
export interface Waiting {
  record: { messageId: string; body: string; receiptHandle: string; receiveCount?: number };
  /** The body as parsed on arrival (undefined: not a skyforge job), so the run doesn't parse it again. */
  message?: JobMessage;
  queue: string;
  kind: string;
  critical: boolean;
  receivedAt: number;
  /**
   * Where it goes in its kind's line behind the critical ones: its enqueue time aged by its priority
   * (lib/job/priority.ts agedArrival), as a flow key's line orders its jobs; ties keep arrival order.
   */
  agedAt: number;
}

interface Line {
  critical: Waiting[];
  normal: Waiting[];
}

/** Puts `w` after every message aged no later than it (a line holds a few: ≤ soft + 1 per child). */
function insertAged(line: Waiting[], w: Waiting): void {
  let at = line.length;
  while (at > 0 && (line[at - 1] as Waiting).agedAt > w.agedAt) at--;
  line.splice(at, 0, w);
}

/** Jobs one child takes at once: a batch kind's child takes a whole call. */
const jobsPerChild = (k: PoolKindSpec): number => k.batch?.maxSize ?? 1;

/**
 * What the pool holds, per kind and per queue, and how much more it may take. A queue may take as
 * many messages as its kinds have free `soft` children (a batch kind's child counting for a call of
 * maxSize), plus one probe while any kind can still grow towards `hard`: a critical job can only
 * claim the extra children once it has been received, and the probe lets it in without piling up
 * normal work that no child can start. Everything else stays visible in SQS, for other tasks and for
 * the backlog alarm that scales the service.
 */
export class Intake {
  private readonly lines = new Map<string, Line>();
  private readonly held = new Map<string, number>();

  private readonly kinds: readonly PoolKindSpec[];

  constructor(kinds: readonly PoolKindSpec[]) {
    this.kinds = kinds;
    for (const k of kinds) this.lines.set(k.name, { critical: [], normal: [] });
  }

  /** How many messages `queue` may receive now; `busy` reports a kind's busy children. */
  room(queue: string, busy: (kind: string) => number): number {
    const kinds = this.kinds.filter((k) => k.queue === queue);
    if (kinds.length === 0) return 1;
    let soft = 0;
    let headroom = 0;
    let aboveSoft = 0;
    let waiting = 0;
    for (const k of kinds) {
      const per = jobsPerChild(k);
      soft += k.soft * per;
      headroom += (k.hard - k.soft) * per;
      aboveSoft += Math.max(0, busy(k.name) - k.soft) * per;
      const line = this.lines.get(k.name) as Line;
      waiting += line.critical.length + line.normal.length;
    }
    const normalFree = soft - (this.heldBy(queue) - aboveSoft);
    const probe = headroom > aboveSoft && waiting === 0 ? 1 : 0;
    return Math.max(0, normalFree) + probe;
  }

  /** Counts a received message as held until `release`; lines it up if its kind is a pool kind here. */
  hold(w: Waiting): boolean {
    this.count(w.queue);
    const line = this.lines.get(w.kind);
    if (!line) return false;
    if (w.critical) line.critical.push(w);
    else insertAged(line.normal, w);
    return true;
  }

  /** Counts a received message as held until `release`, without lining it up (a batch kind's item). */
  count(queue: string): void {
    this.held.set(queue, this.heldBy(queue) + 1);
  }

  release(queue: string): void {
    this.held.set(queue, this.heldBy(queue) - 1);
  }

  /** The next message for `kind`, critical first (in arrival order), then by aged priority; not taken. */
  head(kind: string): Waiting | undefined {
    const line = this.lines.get(kind);
    return line?.critical[0] ?? line?.normal[0];
  }

  /** Takes the head (head(kind)) out of its line. */
  take(w: Waiting): void {
    const line = this.lines.get(w.kind) as Line;
    const from = w.critical ? line.critical : line.normal;
    const at = from.indexOf(w);
    if (at >= 0) from.splice(at, 1);
  }

  criticalWaiting(kind: string): boolean {
    return (this.lines.get(kind)?.critical.length ?? 0) > 0;
  }

  /** Empties every line (shutdown): the messages to give back, no longer held. */
  drain(): Waiting[] {
    const all = [...this.lines.values()].flatMap((l) => [...l.critical.splice(0), ...l.normal.splice(0)]);
    for (const w of all) this.release(w.queue);
    return all;
  }

  private heldBy(queue: string): number {
    return this.held.get(queue) ?? 0;
  }
}
