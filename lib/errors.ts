import type * as z from "zod";

/**
 * The error vocabulary: one hierarchy under SkyforgeError (docs/architecture.md §10).
 * - HandlerError: thrown by job handlers to pick an outcome other than "retry with backoff";
 * - ClientError: a caller's mistake, answered with a 4xx and a stable code;
 * - ConfigError: an app or an operator's file that cannot run (at start or deploy, never per request);
 * - StoreError: what a store operation reports (a lost race, a missing item, an item in the wrong
 *   state); the API maps the last two to codes, never the store itself.
 * - UsageError: the app's code used skyforge in a way that can never work (a bug in the app, met
 *   at run time); TransientError: a dependency left part of the work undone, try again;
 *   InvariantError: skyforge's own code reached a state it should never reach (a bug in skyforge).
 * Anything else that reaches a caller is answered `internal` (500) without details: the last three
 * have no code of their own in the table below, on purpose (the caller can't act on them).
 */
export abstract class SkyforgeError extends Error {}

/** Every code an answer can carry, with its HTTP status: the one table. */
export const errorCodes = {
  validation_error: 400,
  unknown_kind: 400,
  /**
   * A token's completion without its secret (docs/architecture.md §22); a request to a loopback
   * server from another site's page, or for another Host (http/request-guard.ts).
   */
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  /** A batch kind's key already has maxPendingPerKey jobs waiting (docs/architecture.md §18). */
  key_backlog_full: 429,
  headers_too_large: 431,
  internal: 500,
} as const;
export type ErrorCode = keyof typeof errorCodes;
export type ClientErrorCode = Exclude<ErrorCode, "internal">;

export interface ClientIssue {
  path: string;
  message: string;
}

/** A zod error as issues a caller can read: each names its path (dotted; "(root)" for the whole value). */
export function issuesOf(error: z.ZodError, prefix: (string | number)[] = []): ClientIssue[] {
  return error.issues.map((i) => ({
    path: [...prefix, ...i.path].map(String).join(".") || "(root)",
    message: i.message,
  }));
}

/** The shape of every error answer, over HTTP and over Invoke. */
export interface ErrorBody {
  error: { code: ErrorCode; message: string; issues?: ClientIssue[] };
}

export const internalErrorBody = (message = "internal error"): ErrorBody => ({
  error: { code: "internal", message },
});

/** Declarations or configuration that cannot run: raised at start or deploy, naming every problem. */
export class ConfigError extends SkyforgeError {
  override readonly name: string = "ConfigError";
}

/**
 * The app's code called skyforge wrongly (an undeclared rate-limit scope, a batch handler answering
 * for the wrong number of items). Not a HandlerError: the job's outcome is the plain "retry with
 * backoff" of any failure, and the fix is in the app.
 */
export class UsageError extends SkyforgeError {
  override readonly name: string = "UsageError";
}

/**
 * A durable call the app's code makes wrongly (docs/architecture.md §22): a step name used twice in
 * one run, a sleep or a wait's timeout out of range, a step result JSON can't hold. The handler runs
 * from the top on every attempt and would make the same call again, so unlike a plain UsageError the
 * job ends dead at once, as on an UnrecoverableError; the message names the step. A run that lost its
 * lease throws a plain UsageError instead: that is no mistake of the app's, and the new owner goes on.
 */
export class DurableMisuseError extends UsageError {
  override readonly name = "DurableMisuseError";
}

/**
 * A dependency left part of the work undone (DynamoDB kept keys unprocessed, SQS refused messages):
 * nothing was lost and the same call may succeed if retried.
 */
export class TransientError extends SkyforgeError {
  override readonly name = "TransientError";
}

/** A state skyforge's own code should never reach: a bug here, never the app's or a caller's. */
export class InvariantError extends SkyforgeError {
  override readonly name = "InvariantError";
}

/**
 * A pool child could not answer for its job (out of step with the protocol, dead twice, killed on a
 * timeout or cancel): the attempt fails as any failure does, and the child is never reused.
 */
export class ChildFailure extends SkyforgeError {
  override readonly name = "ChildFailure";
}

/** Picks a job's outcome from inside its handler. */
export abstract class HandlerError extends SkyforgeError {}

/** The job can never succeed (bad input, missing resource): dead at once, no retry. */
export class UnrecoverableError extends HandlerError {
  override readonly name: string = "UnrecoverableError";
}

/**
 * A child job `ctx.invoke` waited for ended without a result (docs/guide/durable-jobs.md, "Child
 * jobs"): dead, or cancelled. Thrown into the parent's handler, which may catch it; uncaught, the
 * parent ends dead at once, as on an UnrecoverableError: its replay would meet the same end.
 */
export class ChildJobError extends UnrecoverableError {
  override readonly name = "ChildJobError";
  /** The child step's name in the parent. */
  readonly step: string;
  readonly childId: string;
  readonly childStatus: "dead" | "cancelled";
  /** The child's last error (its lastError), or why it ended without one. */
  readonly childError: string;

  constructor(step: string, childId: string, childStatus: "dead" | "cancelled", childError: string) {
    super(`child step "${step}": job ${childId} ended ${childStatus}: ${childError}`);
    this.step = step;
    this.childId = childId;
    this.childStatus = childStatus;
    this.childError = childError;
  }
}

/**
 * A partner's back-pressure, as a handler reports it: the message, or `limit` naming the kind's flow
 * limit the partner answered for (docs/guide/flow-control.md, "Limits that adapt"): that limit's key
 * of the job cools for the delay, and an adaptive rate halves.
 */
export interface BackPressure {
  message?: string;
  /** A flow limit of the job's kind, by name ("1".."4" for unnamed ones). */
  limit?: string;
}

const backPressure = (given: string | BackPressure | undefined, fallback: string) => {
  const options = typeof given === "string" ? { message: given } : (given ?? {});
  return { message: options.message ?? fallback, limit: options.limit };
};

/**
 * Retry, but after exactly this many seconds instead of the queue's backoff. Spends an attempt. A
 * `limit` named: that flow limit's key cools for as long (its other jobs wait too).
 */
export class RetryAfterError extends HandlerError {
  override readonly name = "RetryAfterError";
  readonly retryAfterSeconds: number;
  readonly limit: string | undefined;

  constructor(retryAfterSeconds: number, options?: string | BackPressure) {
    const { message, limit } = backPressure(options, `retry after ${retryAfterSeconds}s`);
    super(message);
    this.retryAfterSeconds = retryAfterSeconds;
    this.limit = limit;
  }
}

/**
 * A shared resource is saturated: no attempt is spent and the job comes back after the delay. What
 * cools: the job's flow key (the limit named, else its kind's first), or, for a kind without flow
 * control, the whole queue.
 */
export class ThrottledError extends HandlerError {
  override readonly name = "ThrottledError";
  readonly retryAfterSeconds: number;
  readonly limit: string | undefined;

  constructor(retryAfterSeconds: number, options?: string | BackPressure) {
    const { message, limit } = backPressure(options, `throttled for ${retryAfterSeconds}s`);
    super(message);
    this.retryAfterSeconds = retryAfterSeconds;
    this.limit = limit;
  }
}

/** A caller's mistake. Never a 5xx; the message is safe to show. */
export class ClientError extends SkyforgeError {
  override readonly name = "ClientError";
  readonly code: ClientErrorCode;
  readonly issues?: ClientIssue[];

  constructor(code: ClientErrorCode, message: string, issues?: ClientIssue[]) {
    super(message);
    this.code = code;
    this.issues = issues;
  }
  get httpStatus(): number {
    return errorCodes[this.code];
  }
  toBody(): ErrorBody {
    return {
      error: { code: this.code, message: this.message, ...(this.issues ? { issues: this.issues } : {}) },
    };
  }
}

/** What a store operation reports besides its result. */
export abstract class StoreError extends SkyforgeError {}

/** A conditional write lost its race; `current` is the item as DynamoDB saw it, when it exists. */
export class StoreConflict<T = Record<string, unknown>> extends StoreError {
  override readonly name = "StoreConflict";
  readonly operation: string;
  readonly current: T | undefined;

  constructor(operation: string, current: T | undefined) {
    super(`${operation}: condition failed`);
    this.operation = operation;
    this.current = current;
  }
}

/**
 * DynamoDB refused a write because the item would pass its 400 KB limit. The same write fails on
 * every retry, so the caller ends the job instead of retrying it (lib/store/oversized-ops.ts).
 */
export class ItemTooLarge extends StoreError {
  override readonly name = "ItemTooLarge";
  readonly operation: string;

  constructor(operation: string) {
    super(`${operation}: the item would pass DynamoDB's 400 KB limit`);
    this.operation = operation;
  }
}

/** The item the operation needs does not exist. */
export class ItemNotFound extends StoreError {
  override readonly name = "ItemNotFound";
}

/** The item exists but its state forbids the operation; `current` is the item as it is now. */
export class InvalidItemState<T = Record<string, unknown>> extends StoreError {
  override readonly name = "InvalidItemState";
  readonly current?: T;

  constructor(message: string, current?: T) {
    super(message);
    this.current = current;
  }
}

/** An argument the store can't use (a cursor it never handed out). */
export class InvalidStoreInput extends StoreError {
  override readonly name = "InvalidStoreInput";
}

/**
 * A stored item or message in a format newer than this code reads (docs/architecture.md §24): it was
 * written by a later skyforge, and this one (a rollback) refuses it rather than misread it. Nothing is
 * lost: the item stays as it is, a message stays in its queue, for the newer version to read.
 */
export class StoredFormatTooNew extends StoreError {
  override readonly name = "StoredFormatTooNew";
  readonly format: string;
  readonly found: number;
  readonly known: number;

  constructor(format: string, found: number, known: number, what: string) {
    super(
      `${what} is in ${format} format v${found}; this skyforge reads ${format} formats up to v${known}: it was written by a newer version, which must read it (roll forward)`,
    );
    this.format = format;
    this.found = found;
    this.known = known;
  }
}
