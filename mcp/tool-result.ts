import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { SkyforgeApiError, SkyforgeTransportError } from "../client/errors.ts";
import type { ClientIssue } from "../lib/errors.ts";

/**
 * A tool's answer (docs/guide/mcp.md): a one-line summary a person or a model reads first, then the
 * answer itself as JSON text, so an agent can parse it without guessing at prose.
 */
export function toolAnswer(summary: string, value: unknown): CallToolResult {
  return {
    content: [
      { type: "text", text: summary },
      { type: "text", text: JSON.stringify(value, null, 2) },
    ],
  };
}

/**
 * A refused or failed call as an MCP tool error (`isError`, so the model sees it and can correct
 * itself), carrying the API's error code: `validation_error` with the fields at fault, `not_found`,
 * `conflict`… A transport failure (the API unreachable, or not the API) is `unavailable`.
 */
export function toolError(code: string, message: string, issues?: readonly ClientIssue[]): CallToolResult {
  const error = { code, message, ...(issues && issues.length > 0 ? { issues } : {}) };
  const where = issues && issues.length > 0 ? ` (${issues.map((i) => `${i.path}: ${i.message}`).join("; ")})` : "";
  return {
    isError: true,
    content: [
      { type: "text", text: `${code}: ${message}${where}` },
      { type: "text", text: JSON.stringify({ error }, null, 2) },
    ],
  };
}

/** A refusal as the API words it: its code, message and the fields at fault. */
export interface ApiRefusal {
  code: string;
  message: string;
  issues?: ClientIssue[];
}

/** What the client threw, as the API's refusal; anything else is a bug of ours, and is thrown on. */
export function refusalOf(err: unknown): ApiRefusal {
  if (err instanceof SkyforgeApiError) {
    return { code: err.code, message: err.message, ...(err.issues ? { issues: err.issues } : {}) };
  }
  if (err instanceof SkyforgeTransportError) return { code: "unavailable", message: err.message };
  throw err;
}

/** What the client threw, as a tool error. */
export function errorAnswer(err: unknown): CallToolResult {
  const { code, message, issues } = refusalOf(err);
  return toolError(code, message, issues);
}
