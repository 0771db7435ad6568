import type { JobStatus, JobView } from "../client/vocabulary.ts";
import { oneLine, shortTime } from "./output.ts";

/**
 * What `skyforge tail` prints: one change of a job between two looks at the jobs. The API has no
 * change feed, so tail compares snapshots; a state that came and went between two looks is not seen
 * (a job seen queued and then done went through running unseen: it prints queued → done).
 */
export interface JobChange {
  /** When it happened, as far as the job says: startedAt for running, finishedAt for an end, createdAt for a new job; else when tail saw it. */
  time: string;
  id: string;
  kind: string;
  queue: string;
  /** null for a job tail had not seen before (enqueued since it started). */
  from: JobStatus | null;
  to: JobStatus;
  attempts: number;
  maxAttempts: number;
  lastError?: string;
}

interface Seen {
  status: JobStatus;
  attempts: number;
}

/**
 * Remembers each job's status and attempts. The first look is the baseline (nothing printed); after
 * that, a new job or a new status is a change, and so is a new attempt in the same status (a retry
 * seen only as queued → queued, its running in between missed).
 */
export class ChangeTracker {
  private readonly seen = new Map<string, Seen>();
  private started = false;

  /** Records a full look at the jobs and returns the changes since the last one, oldest first. */
  observe(jobs: readonly JobView[], now: Date): JobChange[] {
    const baseline = !this.started;
    this.started = true;
    const changes: JobChange[] = [];
    const present = new Set<string>();
    for (const job of jobs) {
      present.add(job.id);
      const before = this.seen.get(job.id);
      this.seen.set(job.id, { status: job.status, attempts: job.attempts });
      if (baseline) continue;
      if (before && before.status === job.status && before.attempts === job.attempts) continue;
      changes.push(changeOf(job, before?.status ?? null, now));
    }
    // Jobs gone from the table (retention) are forgotten, so memory follows the table.
    for (const id of this.seen.keys()) if (!present.has(id)) this.seen.delete(id);
    return changes.sort((a, b) => a.time.localeCompare(b.time) || a.id.localeCompare(b.id));
  }

  get size(): number {
    return this.seen.size;
  }
}

function changeOf(job: JobView, from: JobStatus | null, now: Date): JobChange {
  return {
    time: changeTime(job, from, now),
    id: job.id,
    kind: job.kind,
    queue: job.queue,
    from,
    to: job.status,
    attempts: job.attempts,
    maxAttempts: job.maxAttempts,
    ...(job.lastError !== undefined ? { lastError: job.lastError } : {}),
  };
}

function changeTime(job: JobView, from: JobStatus | null, now: Date): string {
  const stamped =
    job.status === "running"
      ? job.startedAt
      : job.status === "done" || job.status === "dead" || job.status === "cancelled"
        ? job.finishedAt
        : from === null
          ? job.createdAt
          : undefined;
  return stamped ?? now.toISOString();
}

/**
 * `18:59:26Z  01K…  echo  default  queued → running  (attempt 1/3)`: one line, whatever the job's
 * error holds (line breaks shown as ↵, control characters shown rather than obeyed).
 */
export function renderChange(c: JobChange): string {
  const time = shortTime(c.time)?.slice(11) ?? c.time;
  const move = c.from === null ? `new → ${c.to}` : `${c.from} → ${c.to}`;
  const error = c.lastError && c.to !== "done" && c.to !== "running" ? `  ${c.lastError}` : "";
  return oneLine(
    `${time}  ${c.id}  ${c.kind}  ${c.queue}  ${move}  (attempt ${c.attempts}/${c.maxAttempts})${error}`,
  );
}
