/**
 * What `skyforge doctor` reads as wrong, from the HTTP API's own answers (GET /queues, GET /schedules,
 * GET /jobs, GET /keys) and, on a stage, its CloudWatch alarms: pure, so a test hands it views and a
 * clock. One finding a problem, each with what to do.
 */
import { type BusyKey, CODE_CHANGE_PAUSE, flowKey, flowKeyPath } from "../client/vocabulary.ts";

export interface Finding {
  /** Which check found it: a stable word scripts can branch on. */
  check:
    | "stuck-run"
    | "paused-queue"
    | "event-source-off"
    | "partial-batch-off"
    | "visibility-short"
    | "dead-letters"
    | "overdue-queue"
    | "failing-schedule"
    | "lagging-key"
    | "nondeterministic-job"
    | "alarm";
  /** The queue, schedule or job it is about. */
  subject: string;
  message: string;
  fix: string;
}

/** The fields of the API's views the checks read (the client types them loosely). */
export interface DoctorQueue {
  name: string;
  paused: boolean;
  /** SQS's counts: `visible` and `delayed` messages are jobs waiting for a worker. */
  counts?: { dlq?: number; visible?: number; delayed?: number };
  eventSource?: { enabled?: boolean; state?: string; reportsBatchItemFailures?: boolean };
  /** What SQS has, and what a deploy sets (workerTimeout + batching window + an init). */
  visibilityTimeoutSeconds?: number;
  declared?: { visibilityTimeoutSeconds?: number };
}
export interface DoctorSchedule {
  name: string;
  enabled?: boolean;
  lastRunAt?: string;
  lastError?: string;
  lastErrorAt?: string;
}
export interface DoctorJob {
  id: string;
  kind: string;
  queue: string;
  runAt: string;
  leaseUntil?: string;
  lastError?: string;
}

/** One busy flow key of a queue (GET /keys?queue=…), with when its oldest parked job became due. */
export type DoctorKey = Pick<BusyKey, "kind" | "key" | "waiting" | "oldestWaitingSince"> & { queue: string };
/** A CloudWatch alarm of the stage in state ALARM. */
export interface DoctorAlarm {
  name: string;
  reason?: string;
  since?: string;
}

/**
 * When a flow key lags its peers: its oldest parked job has waited at least `minMs` and at least
 * `factor` times the median wait of the queue's other busy keys (one other at least). The defaults:
 * five times, and five minutes, so a key that is merely the busiest at a busy moment isn't named.
 */
export interface KeyLag {
  factor: number;
  minMs: number;
}
export const DEFAULT_KEY_LAG: KeyLag = { factor: 5, minMs: 300_000 };

export interface DoctorInput {
  queues: readonly DoctorQueue[];
  schedules: readonly DoctorSchedule[];
  /** Running jobs, each with its lease's end. */
  running: readonly DoctorJob[];
  /** Each queue's oldest queued job, where it has one. */
  oldestQueued: readonly DoctorJob[];
  /** Paused jobs (absent: not checked): those a durable replay paused are named. */
  paused?: readonly DoctorJob[];
  /** Each queue's queued jobs as listed (absent: none listed). */
  queuedCounts?: Readonly<Record<string, number>>;
  now: number;
  /** A run this long past its lease is stuck (the reaper or a redelivery takes over within 2 × lease). */
  stuckAfterMs: number;
  /** A queued job this long past its due time means nothing is taking the queue's jobs. */
  overdueAfterMs: number;
  /** Each queue's busiest flow keys (absent: not checked). */
  keys?: readonly DoctorKey[];
  keyLag?: KeyLag;
  /** The stage's alarms in ALARM (absent: not checked, as on a local stack). */
  alarms?: readonly DoctorAlarm[];
}

const seconds = (ms: number) => `${Math.round(ms / 1000)} s`;

export function findProblems(input: DoctorInput): Finding[] {
  const findings: Finding[] = [];
  for (const job of input.running) {
    if (job.leaseUntil === undefined) continue;
    const past = input.now - Date.parse(job.leaseUntil);
    if (past < input.stuckAfterMs) continue;
    findings.push({
      check: "stuck-run",
      subject: job.id,
      message: `job ${job.id} (${job.kind} on ${job.queue}) is running ${seconds(past)} past its lease with no heartbeat: its worker died or froze`,
      fix: "a redelivery or the reaper's takeover runs it again within 2 × its lease; if it stays, check that the queue's event source and the scheduled functions run (npx skyforge queues ls)",
    });
  }
  const paused = new Set<string>();
  for (const q of input.queues) {
    const waiting = waitingJobs(q, input.queuedCounts?.[q.name] ?? 0);
    if (q.paused && waiting > 0) {
      paused.add(q.name);
      findings.push({
        check: "paused-queue",
        subject: q.name,
        message: `queue ${q.name} is paused with ${waiting} job(s) waiting: none of them runs until it is resumed`,
        fix: `npx skyforge queues resume ${q.name} if its jobs should run; leave it paused to hold them on purpose`,
      });
    }
    const source = q.eventSource;
    if (source && source.enabled === false && !q.paused)
      findings.push({
        check: "event-source-off",
        subject: q.name,
        message: `queue ${q.name} is not paused, but its event source is off (${source.state ?? "disabled"}): nothing takes its jobs`,
        fix: `npx skyforge queues resume ${q.name} turns it back on (the reaper's repair pass also does, each tick)`,
      });
    if (source && source.reportsBatchItemFailures === false)
      findings.push({
        check: "partial-batch-off",
        subject: q.name,
        message: `queue ${q.name}'s event source doesn't take partial batch responses: one failed job sends its whole batch back`,
        fix: "deploy again (infra/workers.ts turns ReportBatchItemFailures on); someone changed the mapping by hand",
      });
    const actual = q.visibilityTimeoutSeconds;
    const needed = q.declared?.visibilityTimeoutSeconds;
    if (actual !== undefined && needed !== undefined && actual < needed)
      findings.push({
        check: "visibility-short",
        subject: q.name,
        message: `queue ${q.name}'s SQS visibility timeout is ${actual} s, below the ${needed} s its worker timeout, batching window and an init need: a message can come back while its job runs`,
        fix: "deploy again (infra sets it from the declaration); someone changed the queue by hand",
      });
    const dlq = q.counts?.dlq ?? 0;
    if (dlq > 0)
      findings.push({
        check: "dead-letters",
        subject: q.name,
        message: `queue ${q.name}'s dead-letter queue holds ${dlq} message(s)`,
        fix: "the reaper turns them into dead jobs each tick: if they stay, the reaper isn't running; read them with npx skyforge jobs ls --status dead",
      });
  }
  for (const job of input.oldestQueued) {
    // A paused queue's jobs wait on purpose or by mistake: named above, with the fix, either way.
    if (paused.has(job.queue)) continue;
    const late = input.now - Date.parse(job.runAt);
    if (late < input.overdueAfterMs) continue;
    findings.push({
      check: "overdue-queue",
      subject: job.queue,
      message: `queue ${job.queue}'s oldest queued job ${job.id} (${job.kind}) has waited ${seconds(late)} past its due time`,
      fix: `check that queue ${job.queue} is not paused and its event source is on (npx skyforge queues ls), and its workers' errors`,
    });
  }
  for (const s of input.schedules) {
    if (s.enabled === false || s.lastErrorAt === undefined) continue;
    const failedLast = s.lastRunAt === undefined || Date.parse(s.lastErrorAt) >= Date.parse(s.lastRunAt);
    if (!failedLast) continue;
    findings.push({
      check: "failing-schedule",
      subject: s.name,
      message: `schedule ${s.name} failed at ${s.lastErrorAt}: ${s.lastError ?? "no error recorded"}`,
      fix: "fix what the error names (its kind, queue or payload), then npx skyforge schedules put it again",
    });
  }
  for (const job of input.paused ?? []) {
    // A NonDeterminismError's or a VersionChangedError's: the job's code changed under it.
    if (!job.lastError?.endsWith(CODE_CHANGE_PAUSE)) continue;
    findings.push({
      check: "nondeterministic-job",
      subject: job.id,
      message: `durable job ${job.id} (${job.kind}) is paused: ${job.lastError}`,
      fix: `deploy a handler that takes the job's recorded path (ctx.version keeps old runs on theirs: docs/guide/durable-jobs.md, "Changing a durable kind safely"), then npx skyforge jobs resume ${job.id}; or npx skyforge jobs cancel ${job.id}`,
    });
  }
  findings.push(...laggingKeys(input.keys ?? [], input.now, input.keyLag ?? DEFAULT_KEY_LAG));
  for (const a of input.alarms ?? [])
    findings.push({
      check: "alarm",
      subject: a.name,
      message: `alarm ${a.name} is in ALARM${a.since ? ` since ${a.since}` : ""}${a.reason ? `: ${a.reason}` : ""}`,
      fix: "its description says what it watches (the queue's dashboard shows the metric); fix the cause, and it returns to OK by itself",
    });
  return findings;
}

/** A queue's jobs waiting for a worker: SQS's messages ready or delayed, or the queued jobs listed. */
function waitingJobs(q: DoctorQueue, listed: number): number {
  return Math.max(listed, (q.counts?.visible ?? 0) + (q.counts?.delayed ?? 0));
}

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
};

/** The keys whose oldest parked job waited far longer than the median of their queue's other busy keys. */
export function laggingKeys(keys: readonly DoctorKey[], now: number, lag: KeyLag): Finding[] {
  const waited = keys
    .filter((k) => k.oldestWaitingSince !== undefined && k.waiting > 0)
    .map((k) => ({ ...k, ms: Math.max(0, now - Date.parse(k.oldestWaitingSince ?? "")) }));
  const findings: Finding[] = [];
  for (const [queue, mine] of Map.groupBy(waited, (k) => k.queue)) {
    for (const k of mine) {
      const peers = mine.filter((o) => o !== k).map((o) => o.ms);
      if (peers.length === 0) continue;
      const typical = median(peers);
      if (k.ms < lag.minMs || k.ms < lag.factor * typical) continue;
      findings.push({
        check: "lagging-key",
        subject: `${k.kind}/${k.key}`,
        message: `flow key ${k.key} of ${k.kind} on ${queue} has a job waiting ${seconds(k.ms)}, the median of its ${peers.length} busiest peer key(s) ${seconds(typical)}; ${k.waiting} job(s) waiting`,
        fix: `GET ${flowKeyPath(flowKey(k.kind, k.key))} (or the console's queue view) shows what holds it back: a cool-down, its rate, its concurrency, or runs that hold its places`,
      });
    }
  }
  return findings;
}
