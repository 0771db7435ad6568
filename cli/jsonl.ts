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
  priority?: "normal" | "critical";
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
  bytes: number;
}

/**
 * Groups job lines into POST /jobs/batch requests: at most `maxItems` jobs (the API's 100) and, so
 * the request stays under Lambda's 6 MB payload limit, at most `maxBytes` of serialized jobs (one
 * job larger than that goes alone, and the API answers it 413).
 */
export function createBatcher(limits: { maxItems: number; maxBytes: number }) {
  let current: Batch = { lines: [], jobs: [], bytes: 0 };
  const take = (): Batch | undefined => {
    if (current.jobs.length === 0) return undefined;
    const full = current;
    current = { lines: [], jobs: [], bytes: 0 };
    return full;
  };
  return {
    /** Adds a job; returns the batches it closed (none until one is full). */
    add(line: number, job: JobRequest): Batch[] {
      const bytes = Buffer.byteLength(JSON.stringify(job)) + 1;
      const closed: Batch[] = [];
      const overfull = current.bytes + bytes > limits.maxBytes ? take() : undefined;
      if (overfull) closed.push(overfull);
      current.lines.push(line);
      current.jobs.push(job);
      current.bytes += bytes;
      if (current.jobs.length >= limits.maxItems) closed.push(take() as Batch);
      return closed;
    },
    /** The last, partly filled batch. */
    flush: take,
  };
}
