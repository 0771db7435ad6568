import { batchesOf } from "../client/enqueue-many.ts";

/**
 * `skyforge enqueue --file jobs.jsonl`: one enqueue request per line, as POST /jobs takes it
 * (`{"kind":"echo","payload":{…},"queue":…}`). A line is checked here only as far as the CLI must:
 * it is JSON and an object with a string `kind`; everything else (unknown kinds, payloads, fields)
 * is the API's to judge, so the file gets exactly the answers POST /jobs would give.
 */

/** A job line as sent: the request object of POST /jobs. */
export type JobRequest = Record<string, unknown> & { kind: string };

/** A line the CLI or the API refused. Codes are the API's, plus `invalid_json` and `not_sent`. */
export interface LineFailure {
  line: number;
  code: string;
  message: string;
  issues?: { path: string; message: string }[];
}

export type ParsedLine = { line: number; job: JobRequest } | { line: number; failure: LineFailure };

/** Fields the command line gives every line that doesn't set them itself (`--queue`, `--delay`, …). */
export interface JobDefaults {
  queue?: string;
  delaySeconds?: number;
  runAt?: string;
  priority?: number | "normal" | "critical";
  maxAttempts?: number;
  timeoutSeconds?: number;
}

/** True for a line with nothing on it: skipped, not a job and not a failure. */
export const isBlank = (text: string): boolean => text.trim() === "";

/** One line of the file (1-based `line`); undefined for a blank line. */
export function parseJobLine(text: string, line: number, defaults: JobDefaults = {}): ParsedLine | undefined {
  const source = line === 1 ? text.replace(/^\uFEFF/, "") : text;
  if (isBlank(source)) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(source);
  } catch (err) {
    return { line, failure: { line, code: "invalid_json", message: `not JSON: ${(err as Error).message}` } };
  }
  const refused = (message: string): ParsedLine => ({
    line,
    failure: { line, code: "validation_error", message },
  });
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return refused(
      `expected an object with a "kind", got ${Array.isArray(value) ? "an array" : JSON.stringify(value)}`,
    );
  }
  const kind = (value as Record<string, unknown>).kind;
  if (kind === undefined) return refused(`"kind" is missing: every line names its job's kind`);
  if (typeof kind !== "string") return refused(`"kind" must be a string, got ${JSON.stringify(kind)}`);
  return { line, job: withDefaults(value as JobRequest, defaults) };
}

function withDefaults(job: JobRequest, defaults: JobDefaults): JobRequest {
  const out: JobRequest = { ...job };
  const timed = "delaySeconds" in job || "runAt" in job;
  if (defaults.queue !== undefined && !("queue" in job)) out.queue = defaults.queue;
  if (defaults.delaySeconds !== undefined && !timed) out.delaySeconds = defaults.delaySeconds;
  if (defaults.runAt !== undefined && !timed) out.runAt = defaults.runAt;
  if (defaults.priority !== undefined && !("priority" in job)) out.priority = defaults.priority;
  if (defaults.maxAttempts !== undefined && !("maxAttempts" in job)) out.maxAttempts = defaults.maxAttempts;
  if (defaults.timeoutSeconds !== undefined && !("timeoutSeconds" in job))
    out.timeoutSeconds = defaults.timeoutSeconds;
  return out;
}

export interface Batch {
  lines: number[];
  jobs: JobRequest[];
}

interface PendingLine {
  line: number;
  job: JobRequest;
  bytes: number;
}

/**
 * Groups job lines into POST /jobs/batch requests as they are read, by the client's own rule
 * (client/enqueue-many.ts batchesOf: at most 100 jobs, and a body that fits Lambda's payload; one job
 * larger than that goes alone, and the API answers it 413), so each batch handed to
 * client.enqueueMany is exactly one request. The CLI can't hand the client the whole file: it streams
 * a file of any size, and between requests it reports progress and may stop (Ctrl-C, no answer).
 */
export function createBatcher() {
  let pending: PendingLine[] = [];
  const batchOf = (items: readonly PendingLine[]): Batch => ({
    lines: items.map((p) => p.line),
    jobs: items.map((p) => p.job),
  });
  return {
    /** Adds a job; returns the batches it closed (none until the next job no longer fits). */
    add(line: number, job: JobRequest): Batch[] {
      pending.push({ line, job, bytes: Buffer.byteLength(JSON.stringify(job)) });
      // At most 101 jobs pending: every batch but the last is closed, as the client would send it.
      const batches = batchesOf(pending);
      pending = batches.pop() ?? [];
      return batches.map(batchOf);
    },
    /** The last, partly filled batch. */
    flush(): Batch | undefined {
      if (pending.length === 0) return undefined;
      const last = batchOf(pending);
      pending = [];
      return last;
    },
  };
}
