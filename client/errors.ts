import { type ClientIssue, type ErrorCode, errorCodes } from "../lib/errors.ts";

/**
 * What the client throws, one hierarchy:
 * - SkyforgeApiError: the API answered with its error shape `{ error: { code, message, issues? } }`
 *   (or the client refused a request the API would have refused the same way, without sending it);
 * - SkyforgeTransportError: no answer from the API itself: the connection failed, or something else
 *   answered (API Gateway's own `{"message":"Forbidden"}`, a Lambda function error, a proxy's page).
 * Both are classes, so `instanceof` works; `isSkyforgeApiError(err, code?)` narrows in one step.
 */
export abstract class SkyforgeClientError extends Error {}

export class SkyforgeApiError extends SkyforgeClientError {
  override readonly name = "SkyforgeApiError";
  /** The HTTP status the API answered (or would have: `errorCodes[code]`). */
  readonly status: number;
  /** One of the API's codes (`errorCodes` in lib/errors.ts). */
  readonly code: ErrorCode;
  readonly issues?: ClientIssue[];
  /** "client": refused before sending, by the app's schemas; nothing reached the API. */
  readonly raisedBy: "api" | "client";

  constructor(
    status: number,
    code: ErrorCode,
    message: string,
    issues?: ClientIssue[],
    raisedBy: "api" | "client" = "api",
  ) {
    super(message);
    this.status = status;
    this.code = code;
    this.issues = issues;
    this.raisedBy = raisedBy;
  }

  /** The error the API would answer for `code`, raised by the client before sending anything. */
  static refused(code: ErrorCode, message: string, issues?: ClientIssue[]): SkyforgeApiError {
    return new SkyforgeApiError(errorCodes[code], code, message, issues, "client");
  }

  /** The error as the API's body carries it (the shape of a batch item's `error`). */
  toBody(): { code: ErrorCode; message: string; issues?: ClientIssue[] } {
    return { code: this.code, message: this.message, ...(this.issues ? { issues: this.issues } : {}) };
  }
}

export class SkyforgeTransportError extends SkyforgeClientError {
  override readonly name = "SkyforgeTransportError";
  /** What came back, when something did: the HTTP status and the body (parsed JSON, or its text). */
  readonly answer?: { status: number; body: unknown };

  constructor(message: string, answer?: { status: number; body: unknown }, options?: { cause?: unknown }) {
    super(message, options);
    this.answer = answer;
  }
}

export function isSkyforgeApiError(err: unknown, code?: ErrorCode): err is SkyforgeApiError {
  return err instanceof SkyforgeApiError && (code === undefined || err.code === code);
}

export function isSkyforgeTransportError(err: unknown): err is SkyforgeTransportError {
  return err instanceof SkyforgeTransportError;
}

const isErrorCode = (value: unknown): value is ErrorCode =>
  typeof value === "string" && Object.hasOwn(errorCodes, value);

function isIssues(value: unknown): value is ClientIssue[] {
  return (
    Array.isArray(value) &&
    value.every(
      (i) =>
        typeof i === "object" && i !== null && typeof i.path === "string" && typeof i.message === "string",
    )
  );
}

/**
 * The API's error for an answer in its documented shape, or undefined when the answer is not the
 * API's (API Gateway answers its own 403 `{"message":"Forbidden"}` before the function runs).
 */
export function apiErrorFrom(status: number, body: unknown): SkyforgeApiError | undefined {
  if (typeof body !== "object" || body === null || !("error" in body)) return undefined;
  const error = body.error;
  if (typeof error !== "object" || error === null) return undefined;
  const { code, message, issues } = error as Record<string, unknown>;
  if (!isErrorCode(code) || typeof message !== "string") return undefined;
  if (issues !== undefined && !isIssues(issues)) return undefined;
  return new SkyforgeApiError(status, code, message, issues);
}

/** The error for an answer that is not a success: the API's own, or a transport error naming what came back. */
export function errorForAnswer(status: number, body: unknown): SkyforgeClientError {
  return (
    apiErrorFrom(status, body) ??
    new SkyforgeTransportError(
      `HTTP ${status} that is not the skyforge API's answer: ${clip(JSON.stringify(body) ?? "(empty)")}`,
      { status, body },
    )
  );
}

/** Echoes what came back in a message without echoing kilobytes of it. */
export const clip = (text: string, max = 200): string =>
  text.length > max ? `${text.slice(0, max)}…` : text;

/** An underlying failure in one line: its message, and its cause's (fetch's "fetch failed" hides the reason there). */
export function describeError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error ? ` (${err.cause.message})` : "";
  return `${err.name === "Error" ? "" : `${err.name}: `}${err.message}${cause}`;
}
