import { CommanderError } from "commander";
import { describeError, SkyforgeApiError, SkyforgeTransportError } from "../client/errors.ts";

/**
 * The CLI's exit codes (cli/README.md has the same table). Scripts branch on these, so a code keeps
 * its meaning: a new kind of failure gets a new number.
 */
export const exitCodes = {
  /** Everything asked was done. */
  ok: 0,
  /** The command ran, but some of its items failed (bulk enqueue: a line was refused; doctor: a finding). */
  itemsFailed: 1,
  /** The command line is wrong: an unknown option, a bad value, an unreadable file, an unknown stage. */
  usage: 2,
  /** The API answered with a client error (4xx): not_found, conflict, validation_error, … */
  apiRefused: 3,
  /** No answer from the API: the endpoint is unreachable, refused the credentials, or answered a 5xx. */
  unavailable: 4,
  /** The CLI itself failed: a bug, whatever the API did (the message says where). */
  internal: 70,
  /** Stopped by Ctrl-C (SIGINT) before it finished; `tail` stops this way and exits 0 instead. */
  interrupted: 130,
} as const;
export type ExitCode = (typeof exitCodes)[keyof typeof exitCodes];

/** The command line asked for something the CLI can't do: exit 2, before anything is sent. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/** How a failure is reported on stderr: the API's own code when the API answered, else the CLI's. */
export interface ErrorReport {
  code: string;
  message: string;
  status?: number;
  issues?: { path: string; message: string }[];
}

export function exitCodeFor(err: unknown): ExitCode {
  if (err instanceof UsageError) return exitCodes.usage;
  if (err instanceof CommanderError) return err.exitCode === 0 ? exitCodes.ok : exitCodes.usage;
  if (err instanceof SkyforgeApiError) return err.status < 500 ? exitCodes.apiRefused : exitCodes.unavailable;
  if (err instanceof SkyforgeTransportError) return exitCodes.unavailable;
  return exitCodes.internal;
}

export function errorReport(err: unknown): ErrorReport {
  if (err instanceof SkyforgeApiError) {
    return {
      code: err.code,
      message: err.message,
      status: err.status,
      ...(err.issues?.length ? { issues: err.issues } : {}),
    };
  }
  if (err instanceof UsageError) return { code: "usage", message: err.message };
  if (err instanceof CommanderError) return { code: "usage", message: err.message.replace(/^error: /, "") };
  if (err instanceof SkyforgeTransportError) {
    // Something answered that is not the API (API Gateway's 403 for bad credentials, a proxy's
    // page, a function error), or nothing answered at all.
    return err.answer
      ? { code: "unexpected_answer", message: withCause(err), status: err.answer.status }
      : { code: "unreachable", message: withCause(err) };
  }
  const where = err instanceof Error ? (err.stack?.split("\n")[1]?.trim() ?? "") : "";
  // A bug: its class (TypeError, …) and its cause's message help find it.
  return { code: "cli_error", message: `${describeError(err)}${where ? ` (${where})` : ""}` };
}

/**
 * A transport error's message, with its cause's code (ECONNREFUSED) when the message lacks it. Not
 * describeError (client/errors.ts): that one prefixes the class name, noise beside the report's code,
 * and appends the cause's message even when the transport's message already carries it.
 */
function withCause(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error ? err.cause : undefined;
  const detail = cause ? ((cause as { code?: string }).code ?? cause.message) : undefined;
  return detail && !err.message.includes(detail) ? `${err.message} (${detail})` : err.message;
}
