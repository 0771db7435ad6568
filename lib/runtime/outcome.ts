import { NonDeterminismError, ParallelStepError, VersionChangedError } from "../durable-errors.ts";
import { DurableMisuseError, RetryAfterError, ThrottledError, UnrecoverableError } from "../errors.ts";
import type { AbortCause, BackoffPolicy } from "../job/kind.ts";
import { MAX_PAYLOAD_BYTES } from "../job/schemas.ts";
import { MAX_DELAY_SECONDS, MAX_VISIBILITY_SECONDS } from "../limits.ts";
import { Suspension } from "../services/suspension.ts";
import { backoffSeconds } from "./backoff.ts";

/** A result may be as large as a payload: past the claim check's threshold it lives in the claims bucket. */
export const MAX_RESULT_BYTES = MAX_PAYLOAD_BYTES;

export type Decision =
  | { outcome: "done"; result: string }
  /** `limit`: a RetryAfterError named the flow limit whose key cools as long (lib/flow/flow-adapt.ts). */
  | { outcome: "retry"; delaySeconds: number; error: string; limit?: string }
  | { outcome: "reschedule"; delaySeconds: number; error: string; limit?: string }
  /** `limit`: the flow limit whose key cools (its kind's first when absent). */
  | { outcome: "throttled"; delaySeconds: number; reason: string; limit?: string }
  /**
   * `exhausted`: it used its last attempt (a kind with onExhausted "pause" pauses instead).
   * `unstarted`: its handler never ran (its start deadline passed): the claim's attempt is given back.
   */
  | { outcome: "dead"; error: string; exhausted?: true; unstarted?: true }
  /**
   * It waits for an operator (docs/architecture.md §21): its attempts used, or its durable replay
   * diverged from its journal (§22). Claimed lanes only.
   */
  | { outcome: "paused"; error: string }
  | { outcome: "cancelled"; error?: string }
  /** Back to the queue at once with the attempt given back: the process stopped, not the job. */
  | { outcome: "released" }
  /** A durable run ends to wait for a sleep, a token or an event (docs/architecture.md §22). */
  | { outcome: "suspend"; suspension: Suspension }
  | { outcome: "abandon" };

export interface RunEnd {
  ok: boolean;
  value?: unknown;
  error?: unknown;
  abort?: AbortCause;
}

export interface OutcomeInput {
  attempt: number;
  maxAttempts: number;
  backoff: BackoffPolicy;
  random?: () => number;
  timeoutSeconds: number;
}

const describe = (err: unknown) => (err instanceof Error ? err.message : String(err)).slice(0, 500);

/** Pure mapping from how a run ended to what the store records (docs/architecture.md §6). */
export function decideOutcome(end: RunEnd, input: OutcomeInput): Decision {
  if (end.abort === "lease_lost") return { outcome: "abandon" };
  if (end.abort === "cancelled") return { outcome: "cancelled", error: "cancelled on request" };
  if (end.abort === "shutdown") return { outcome: "released" };
  if (end.ok && end.abort === undefined && end.value instanceof Suspension)
    return { outcome: "suspend", suspension: end.value };
  if (end.ok && end.abort === undefined) {
    const result = JSON.stringify(end.value ?? null);
    if (Buffer.byteLength(result) > MAX_RESULT_BYTES) {
      return {
        outcome: "dead",
        error: `result is over ${MAX_RESULT_BYTES} bytes once serialized; store large results elsewhere`,
      };
    }
    return { outcome: "done", result };
  }
  const error = end.abort === "timeout" ? `timed out after ${input.timeoutSeconds}s` : describe(end.error);
  // A parallel step's error picks the outcome its step would have (lib/durable/parallel.ts).
  const cause = end.error instanceof ParallelStepError ? end.error.cause : end.error;
  if (cause instanceof ThrottledError) {
    const delay = Math.min(MAX_DELAY_SECONDS, Math.max(1, Math.ceil(cause.retryAfterSeconds)));
    return { outcome: "throttled", delaySeconds: delay, reason: error, ...limitOf(cause) };
  }
  // Code that no longer matches the job's journal would meet the same divergence on every attempt,
  // and its records are not wrong: the job waits for an operator, as an exhausted "pause" kind's does.
  if (end.error instanceof NonDeterminismError || end.error instanceof VersionChangedError)
    return { outcome: "paused", error };
  // A durable misuse would be made again by every attempt: the job ends now (docs/architecture.md §22).
  if (cause instanceof UnrecoverableError || cause instanceof DurableMisuseError)
    return { outcome: "dead", error };
  if (input.attempt >= input.maxAttempts) return { outcome: "dead", error, exhausted: true };
  const retryAfter = cause instanceof RetryAfterError;
  const delaySeconds = retryAfter
    ? Math.max(1, Math.ceil(cause.retryAfterSeconds))
    : backoffSeconds(input.attempt, input.backoff, input.random);
  const named = retryAfter ? limitOf(cause) : {};
  return delaySeconds > MAX_VISIBILITY_SECONDS
    ? { outcome: "reschedule", delaySeconds, error, ...named }
    : { outcome: "retry", delaySeconds, error, ...named };
}

/** The flow limit a back-pressure error names, as a decision carries it. */
const limitOf = (cause: RetryAfterError | ThrottledError) =>
  cause.limit === undefined ? {} : { limit: cause.limit };
