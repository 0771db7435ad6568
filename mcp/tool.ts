import type * as z from "zod";
import type { SkyforgeClient } from "../client/skyforge-client.ts";
import type { AppNames, JobView } from "../client/vocabulary.ts";

/**
 * The server's way to skyforge: the typed client over a transport (the local stack's HTTP API, or a
 * stage's, signed), given no app, so the API judges kinds, payloads and queues as it does the CLI's.
 */
export type McpClient = SkyforgeClient<AppNames>;

/** A tool's answer: a one-line summary and the JSON value; an enqueue's job too (its task). */
export interface ToolOutcome {
  summary: string;
  value: unknown;
  job?: JobView;
}

/** One MCP tool: its name, its input (a zod object, listed as JSON Schema), and what it does. */
export interface McpTool {
  name: string;
  title: string;
  description: string;
  input: z.ZodObject;
  /** Fields the call gets when its arguments leave them out (replay_jobs' dry run). */
  defaults?: Record<string, unknown>;
  /** Changes something (enqueue, cancel, pause…): left out by a `--read-only` server. */
  writes: boolean;
  /** The kind an `enqueue_<kind>` tool enqueues: its calls may ask for a task. */
  enqueues?: string;
  /** Called with the arguments as given (and `defaults`), once they passed `input`. */
  run(args: unknown): Promise<ToolOutcome>;
}
