import { HandlerError, UsageError } from "../errors.ts";
import type { StepOptions } from "../job/durable.ts";

/** A step's own retries: at most this many, each at most this long after the last failure. */
export const MAX_STEP_RETRIES = 10;
export const MAX_STEP_BACKOFF_SECONDS = 30;

/** Why a step's options can't be, naming the step, or undefined when they can. */
export function stepOptionsProblem(name: string, options: StepOptions | undefined): string | undefined {
  if (options === undefined) return undefined;
  const { retries = 0, backoffSeconds = 0 } = options;
  if (!Number.isInteger(retries) || retries < 0 || retries > MAX_STEP_RETRIES)
    return `step "${name}": retries ${retries} is outside 0..${MAX_STEP_RETRIES}`;
  if (!Number.isFinite(backoffSeconds) || backoffSeconds < 0 || backoffSeconds > MAX_STEP_BACKOFF_SECONDS)
    return `step "${name}": backoffSeconds ${backoffSeconds} is outside 0..${MAX_STEP_BACKOFF_SECONDS}`;
  return undefined;
}

/**
 * Calls a step's function, and again after `backoffSeconds` (doubling) while it throws and retries
 * remain, all within this run: the job's attempt is spent only once the step's own retries are. An
 * error that chooses its outcome (UnrecoverableError, RetryAfterError, ThrottledError) or a misuse
 * is never retried here. `wait` is the run's pause (a timer; tests pass their own).
 */
export async function callWithRetries<T>(
  fn: () => Promise<T> | T,
  options: StepOptions | undefined,
  wait: (ms: number) => Promise<void>,
): Promise<T> {
  const retries = options?.retries ?? 0;
  const backoffMs = (options?.backoffSeconds ?? 0) * 1000;
  for (let retry = 0; ; retry++) {
    try {
      return await fn();
    } catch (err) {
      const chosen = err instanceof HandlerError || err instanceof UsageError;
      if (chosen || retry >= retries) throw err;
      if (backoffMs > 0) await wait(backoffMs * 2 ** retry);
    }
  }
}

/** The run's pause between a step's retries. */
export const timerWait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
