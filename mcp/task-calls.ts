import { ErrorCode, RequestSchema } from "@modelcontextprotocol/sdk/types.js";
import * as z from "zod";
import type { JobView } from "../client/vocabulary.ts";
import { isTerminal, type JobStatus } from "../lib/job/status.ts";
import { issuesOf } from "../lib/errors.ts";
import { tokenSchema, waitingToken } from "./job-tasks.ts";
import type { McpKind } from "./kind-tools.ts";
import type { McpClient } from "./tool.ts";
import type { ApiRefusal } from "./tool-result.ts";

/**
 * `tasks/update` (the MCP Tasks extension's call for a task in `input_required`; the SDK pinned
 * here has tasks/get, tasks/result, tasks/list and tasks/cancel, not this one): `data` completes the
 * token the job waits for, as `POST /tokens/{id}` would with the token's url.
 */
export const TasksUpdateRequest = RequestSchema.extend({
  method: z.literal("tasks/update"),
  params: z.looseObject({
    taskId: z.string().min(1).max(64),
    data: z.json().optional(),
  }),
});

/** How often tasks/result looks at a job that has not ended yet. */
const RESULT_POLL_MS = 1_000;

/**
 * A request's JSON-RPC error, as the SDK sends what a handler throws: its `code`, `message` and
 * `data`. Not the SDK's McpError, whose message already carries the "MCP error <code>:" prefix the
 * client adds again.
 */
export class RpcError extends Error {
  readonly code: number;
  readonly data?: unknown;

  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.code = code;
    this.data = data;
  }
}

/** The API's refusal as a task call's JSON-RPC error: invalid params for the caller's mistakes, the refusal in `data`. */
export function taskCallError(refusal: ApiRefusal): RpcError {
  const callers = ["validation_error", "not_found", "conflict", "forbidden"];
  const code = callers.includes(refusal.code) ? ErrorCode.InvalidParams : ErrorCode.InternalError;
  const where = refusal.issues?.length ? ` (${refusal.issues.map((i) => `${i.path}: ${i.message}`).join("; ")})` : "";
  return new RpcError(code, `${refusal.code}: ${refusal.message}${where}`, refusal);
}

/**
 * Completes the token the job waits for with `data`. Its url, which carries the token's secret, is
 * in the job's step record (GET /jobs/{id}/steps), which only the job's readers see: the same
 * caller could complete it with `complete_token`. A job that waits for no token is a conflict.
 */
export async function completeWaitingToken(
  client: McpClient,
  kinds: ReadonlyMap<string, McpKind>,
  jobId: string,
  data: unknown,
): Promise<void> {
  const steps = await client.steps(jobId);
  const token = waitingToken(steps);
  if (!token) {
    throw taskCallError({ code: "conflict", message: `job ${jobId} is not waiting for a token` });
  }
  // The data the kind declares for this token, checked before it is sent: a refusal leaves the job waiting.
  const schema = tokenSchema(kinds, (await client.get(jobId)).kind, token.token);
  const parsed = schema?.safeParse(data ?? null);
  if (parsed && !parsed.success) {
    throw taskCallError({
      code: "validation_error",
      message: `token "${token.token}"'s data doesn't fit what the kind declares: nothing was completed`,
      issues: issuesOf(parsed.error, ["data"]),
    });
  }
  await client.completeToken(token.url, data ?? null);
}

/**
 * tasks/result: the job once it has ended, read again every second until then (the spec's
 * tasks/result waits for the end); the request's abort (the client gave up) ends the wait.
 */
export async function untilEnded(client: McpClient, id: string, signal: AbortSignal): Promise<JobView> {
  for (;;) {
    const job = await client.get(id);
    if (isTerminal(job.status as JobStatus)) return job;
    await new Promise<void>((resolve, reject) => {
      const abort = () => {
        clearTimeout(timer);
        reject(new RpcError(ErrorCode.RequestTimeout, `tasks/result for ${id}: the request was cancelled`));
      };
      // Each look's listener goes with its timer: an hour's wait leaves none behind.
      const timer = setTimeout(() => {
        signal.removeEventListener("abort", abort);
        resolve();
      }, RESULT_POLL_MS);
      if (signal.aborted) abort();
      else signal.addEventListener("abort", abort, { once: true });
    });
  }
}
