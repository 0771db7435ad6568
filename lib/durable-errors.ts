import { SkyforgeError } from "./errors.ts";

/**
 * The errors of durable jobs (docs/architecture.md §22), in the one hierarchy under SkyforgeError:
 * a wait that timed out, a replay that left its journal or its version, a parallel step that failed.
 */

/**
 * A durable wait ran out (`ctx.waitForToken`, `ctx.waitForEvent`): thrown into the handler, which
 * may catch it and go on; uncaught, it fails the attempt like any error.
 */
export class WaitTimeoutError extends SkyforgeError {
  override readonly name: string = "WaitTimeoutError";
  /** The name the wait was recorded under (the token's step, or the event wait's). */
  readonly step: string;
  constructor(step: string, message: string) {
    super(message);
    this.step = step;
  }
}

/** The token was not completed within its timeoutSeconds. */
export class TokenTimeoutError extends WaitTimeoutError {
  override readonly name = "TokenTimeoutError";
}

/** No matching event arrived within the wait's timeoutSeconds. */
export class EventTimeoutError extends WaitTimeoutError {
  override readonly name = "EventTimeoutError";
}

/**
 * A durable job's replay met a name where its journal says otherwise (docs/guide/durable-jobs.md,
 * "Changing a durable kind safely"): at another kind of operation (a step where a sleep was
 * recorded), or out of the recorded order. The code deployed took another path than the run that
 * recorded the job: going on would hand it records of the wrong calls, so the job pauses for an
 * operator (as a kind's onExhausted "pause" does) and `skyforge doctor` lists it.
 */
/**
 * How the message of an error that pauses a durable job for its code's change ends (NonDeterminismError,
 * VersionChangedError), as the job's lastError keeps it: `skyforge doctor` looks for it.
 */
export const CODE_CHANGE_PAUSE = ", so the job is paused";

export class NonDeterminismError extends SkyforgeError {
  override readonly name = "NonDeterminismError";
  readonly jobId: string;
  /** The name the replay met. */
  readonly step: string;
  /** What changed, as the message says it. */
  readonly change: string;
  constructor(jobId: string, step: string, change: string) {
    super(
      `job ${jobId}: step "${step}" ${change}: the handler no longer matches the job's journal${CODE_CHANGE_PAUSE}`,
    );
    this.jobId = jobId;
    this.step = step;
    this.change = change;
  }
}

/**
 * A durable job resumed under another version of its kind than the one that started its journal,
 * and its kind's onVersionChange is "pause" (docs/guide/durable-jobs.md, "Versions"): the job waits
 * for an operator, as on a NonDeterminismError, before its handler is given any record.
 */
export class VersionChangedError extends SkyforgeError {
  override readonly name = "VersionChangedError";
  constructor(jobId: string, kind: string, from: string, to: string) {
    super(
      `job ${jobId} of kind ${kind} was started by version "${from}" and resumes under version "${to}": its kind's onVersionChange is "pause"${CODE_CHANGE_PAUSE}`,
    );
  }
}

/**
 * A step of `ctx.parallel` or `ctx.map` failed, once every other step of the call had settled:
 * names the call and the lowest failed index, the step's error as `cause`. The job's outcome is
 * the cause's (a DurableMisuseError or an UnrecoverableError ends it at once, a plain error
 * retries), and a retry runs only the steps not recorded (docs/guide/durable-jobs.md).
 */
export class ParallelStepError extends SkyforgeError {
  override readonly name = "ParallelStepError";
  /** The call: `map` or `parallel`. */
  readonly method: "map" | "parallel";
  /** The call's name, as `ctx.map(name, …)` gave it. */
  readonly call: string;
  /** The lowest index whose step failed. */
  readonly index: number;
  /** How many of the call's steps failed. */
  readonly failed: number;

  constructor(method: "map" | "parallel", call: string, index: number, failed: number, cause: unknown) {
    const why = cause instanceof Error ? cause.message : String(cause);
    const more = failed > 1 ? ` (${failed} of its steps failed)` : "";
    super(`${method} "${call}": step ${index} failed${more}: ${why}`, { cause });
    this.method = method;
    this.call = call;
    this.index = index;
    this.failed = failed;
  }
}
