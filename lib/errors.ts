/**
 * The error vocabulary. Two families:
 * - handler-facing: thrown by job handlers to pick an outcome other than "retry with backoff";
 * - client-facing: a caller's mistake, mapped to a 4xx with a stable code.
 * Plus StoreConflict, the one internal signal for a lost conditional write.
 */

/** The job can never succeed (bad input, missing resource): dead at once, no retry. */
export class UnrecoverableError extends Error {
  override readonly name = "UnrecoverableError";
}

/** Retry, but after exactly this many seconds instead of the queue's backoff. Spends an attempt. */
export class RetryAfterError extends Error {
  override readonly name = "RetryAfterError";
  constructor(
    readonly retryAfterSeconds: number,
    message = `retry after ${retryAfterSeconds}s`,
  ) {
    super(message);
  }
}

/** A shared resource is saturated: the whole queue cools down and no attempt is spent. */
export class ThrottledError extends Error {
  override readonly name = "ThrottledError";
  constructor(
    readonly retryAfterSeconds: number,
    message = `throttled for ${retryAfterSeconds}s`,
  ) {
    super(message);
  }
}

export type ClientErrorCode =
  | "validation_error"
  | "unknown_kind"
  | "not_found"
  | "payload_too_large"
  | "conflict";

const statusByCode: Record<ClientErrorCode, number> = {
  validation_error: 400,
  unknown_kind: 400,
  not_found: 404,
  payload_too_large: 413,
  conflict: 409,
};

export interface ClientIssue {
  path: string;
  message: string;
}

/** A caller's mistake. Never a 5xx; the message is safe to show. */
export class ClientError extends Error {
  override readonly name = "ClientError";
  constructor(
    readonly code: ClientErrorCode,
    message: string,
    readonly issues?: ClientIssue[],
  ) {
    super(message);
  }
  get httpStatus(): number {
    return statusByCode[this.code];
  }
  toBody(): { error: { code: ClientErrorCode; message: string; issues?: ClientIssue[] } } {
    return {
      error: { code: this.code, message: this.message, ...(this.issues ? { issues: this.issues } : {}) },
    };
  }
}

/** A conditional write lost its race; `current` is the item as DynamoDB saw it, when it exists. */
export class StoreConflict<T = Record<string, unknown>> extends Error {
  override readonly name = "StoreConflict";
  constructor(
    readonly operation: string,
    readonly current: T | undefined,
  ) {
    super(`${operation}: condition failed`);
  }
}
