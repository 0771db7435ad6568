/**
 * Settings and small numeric helpers shared by the bench and its report. The run's shape (jobs,
 * payload size, kind, lane…) comes from the command line: scripts/bench-args.ts.
 */

export const WARMUP = intEnv("BENCH_WARMUP", 100, 0);
export const TIMEOUT_MS = intEnv("BENCH_TIMEOUT_MS", 90_000, 1000);
export const BATCH = 100;
/** Lambda memory of the worker and the enqueue function, as infra/queues.ts and infra/api.ts declare them. */
export const WORKER_MEMORY_MB = 512;
export const ENQUEUE_MEMORY_MB = 512;
/**
 * Assumed Lambda wall time on AWS. The locally measured times are reported too, but they are set by
 * dynalite and fauxqs sharing this process's CPU with 100 records in flight, not by AWS latencies:
 * a worker batch of 10 records (concurrent) is ~2 sequential DynamoDB round trips (claim, finalize)
 * plus SDK and handler overhead; an enqueue call of 100 is one round of SendMessageBatch plus 100
 * PutItems at 16 in flight (~7 round trips).
 */
export const ASSUMED_WORKER_BATCH_MS = 60;
export const ASSUMED_ENQUEUE_CALL_MS = 100;
export const DURATION_MODE = (() => {
  const v = process.env.BENCH_LAMBDA_DURATION ?? "assumed";
  if (v !== "assumed" && v !== "measured")
    throw new Error(`BENCH_LAMBDA_DURATION must be assumed or measured, got "${v}"`);
  return v;
})();

export function intEnv(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be an integer ≥ ${min}, got "${raw}"`);
  return n;
}

/** A JSON payload whose serialized form is exactly `bytes` bytes (ASCII: characters are bytes). */
export function payload(seq: number, bytes: number): { seq: number; pad: string } {
  const bare = JSON.stringify({ seq, pad: "" }).length;
  if (bytes < bare)
    throw new RangeError(`a payload for seq ${seq} takes at least ${bare} bytes, not ${bytes}`);
  return { seq, pad: "x".repeat(bytes - bare) };
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
}

export const mean = (xs: readonly number[]) =>
  xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length;
export const round = (x: number, digits: number) => Number(x.toFixed(digits));
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The group scenario: this many groups of this many echo children, this many in flight at once. One
 * at a time by default, so each completion job is enqueued on a drained queue and its lag is the
 * group machinery's own; with more in flight it also waits behind the other groups' children.
 */
export const GROUPS = intEnv("BENCH_GROUPS", 5, 1);
export const GROUP_CHILDREN = intEnv("BENCH_GROUP_CHILDREN", 1000, 1);
export const GROUP_CONCURRENCY = intEnv("BENCH_GROUP_CONCURRENCY", 1, 1);
/**
 * Assumed wall time of one group create on AWS (one enqueue invocation): its children at the
 * enqueueBatch rate (ASSUMED_ENQUEUE_CALL_MS per 100), plus the group item, the slice puts (16 in
 * flight) and the closing read of the group and its slices, ~5 round trips.
 */
export const ASSUMED_GROUP_CREATE_EXTRA_MS = 50;
export const assumedGroupCreateMs = (children: number) =>
  Math.ceil(children / BATCH) * ASSUMED_ENQUEUE_CALL_MS + ASSUMED_GROUP_CREATE_EXTRA_MS;
