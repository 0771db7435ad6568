import type { CallToolResult, Task } from "@modelcontextprotocol/sdk/types.js";
import * as z from "zod";
import type { JobSteps } from "../client/skyforge-client.ts";
import type { JobView } from "../client/vocabulary.ts";
import type { McpKind } from "./kind-tools.ts";
import type { McpClient } from "./tool.ts";
import { toolAnswer, toolError } from "./tool-result.ts";

/** Where a task's `_meta` says what an `input_required` job asks for (this server's key, not the spec's). */
export const INPUT_META_KEY = "skyforge/input";

/** How often a client should poll a job's task: a job's state changes at run boundaries, not faster. */
const POLL_MS = 1_000;

/** What a job waiting for a token asks for: the token's name (its step), its id, and its data's JSON Schema if the kind declares one. */
export interface TokenAsk {
  token: string;
  tokenId: string;
  schema?: Record<string, unknown>;
}

/**
 * A job as an MCP task (docs/guide/mcp.md): its id is the task's. queued, scheduled, running and
 * paused are `working`; a durable job suspended on a token is `input_required`, with the token's
 * name in `_meta`; done `completed`, dead `failed` (its last error as the message), cancelled
 * `cancelled`. Kept as long as the job is (its retention), so `ttl` is null.
 */
export function taskOf(job: JobView, ask?: TokenAsk): Task & { _meta?: Record<string, unknown> } {
  const base = {
    taskId: job.id,
    ttl: null,
    createdAt: job.createdAt,
    lastUpdatedAt: job.finishedAt ?? job.startedAt ?? job.createdAt,
    pollInterval: POLL_MS,
  };
  switch (job.status) {
    case "done":
      return { ...base, status: "completed" };
    case "dead":
      return { ...base, status: "failed", statusMessage: job.lastError ?? "the job ended dead" };
    case "cancelled":
      return { ...base, status: "cancelled" };
    default:
      if (ask) {
        return {
          ...base,
          status: "input_required",
          statusMessage: `waiting for token "${ask.token}": tasks/update with { taskId, data } completes it`,
          _meta: { [INPUT_META_KEY]: ask },
        };
      }
      return {
        ...base,
        status: "working",
        ...(job.status === "paused" ? { statusMessage: "paused: its attempts ran out; an operator resumes or ends it" } : {}),
      };
  }
}

/** The token a suspended durable job waits for, and its url (from its step record, which carries the secret). */
export function waitingToken(steps: JobSteps): (TokenAsk & { url: string }) | undefined {
  const id = steps.waiting?.for === "token" ? steps.waiting.token : undefined;
  if (id === undefined) return undefined;
  for (const step of steps.steps) {
    const made = step.type === "token" ? (step.result as { id?: unknown; url?: unknown } | undefined) : undefined;
    if (made?.id === id && typeof made.url === "string") return { token: step.name, tokenId: id, url: made.url };
  }
  return undefined;
}

/** The data schema a kind declares for one of its tokens (`tokens` in defineKind), if any. */
export function tokenSchema(kinds: ReadonlyMap<string, McpKind>, kind: string, token: string): z.ZodType | undefined {
  const declared = kinds.get(kind)?.tokens;
  return declared && Object.hasOwn(declared, token) ? declared[token] : undefined;
}

/** A job and, when it is suspended (status scheduled), the token it waits for, with its data's schema. */
export async function readTask(
  client: McpClient,
  kinds: ReadonlyMap<string, McpKind>,
  id: string,
): Promise<ReturnType<typeof taskOf>> {
  const job = await client.get(id);
  if (job.status !== "scheduled") return taskOf(job);
  const token = waitingToken(await client.steps(id));
  if (!token) return taskOf(job);
  const schema = tokenSchema(kinds, job.kind, token.token);
  return taskOf(job, {
    token: token.token,
    tokenId: token.tokenId,
    ...(schema ? { schema: z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) } : {}),
  });
}

/** tasks/result's answer for an ended job: the tool's result (the job), or its error. */
export function taskResult(job: JobView): CallToolResult {
  if (job.status === "done") return toolAnswer(`${job.kind} job ${job.id}: done`, job);
  if (job.status === "dead") return toolError("job_failed", job.lastError ?? `job ${job.id} ended dead`);
  return toolError("job_cancelled", `job ${job.id} was cancelled`);
}
