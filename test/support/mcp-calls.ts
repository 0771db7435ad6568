import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  GetTaskResultSchema,
} from "@modelcontextprotocol/sdk/types.js";

/* The SDK client's calls as test/e2e/mcp.test.ts makes them, and its replay of docs/guide/mcp.md's session. */

/** A tool's answer: its summary line and its JSON. */
export async function call(client: Client, name: string, args: Record<string, unknown>) {
  const result = await client.callTool({ name, arguments: args }, CallToolResultSchema);
  const [summary, json] = result.content as { type: "text"; text: string }[];
  return {
    isError: result.isError === true,
    summary: summary?.text ?? "",
    value: JSON.parse(json?.text ?? "null"),
  };
}

/** A job's task as tasks/get answers it. */
export function taskState(client: Client, taskId: string) {
  return client.request({ method: "tasks/get", params: { taskId } }, GetTaskResultSchema);
}

/** What the guide's session line shows of an answer: a tool's summary, or a task as `task ID: status[: message]`. */
export async function sessionAnswer(
  client: Client,
  line: string,
  ids: Map<string, string>,
): Promise<string | undefined> {
  const filled = line.replace(/<(\w+)>/g, (_, name: string) => ids.get(name) ?? `<${name}>`);
  const task = /^tasks\/(get|update) (\S+)(?: (.+))?$/.exec(filled);
  if (task) {
    const [, call, taskId, data] = task;
    const params = { taskId, ...(data ? { data: JSON.parse(data) } : {}) };
    const answer = await client
      .request({ method: `tasks/${call}`, params }, GetTaskResultSchema)
      .catch((err: unknown) => {
        // A refused task call is a JSON-RPC error: the line shows its message, after the SDK's prefix.
        const refused = err instanceof Error ? /^MCP error -?\d+: (.*)$/s.exec(err.message) : null;
        if (refused) return refused[1] as string;
        throw err;
      });
    if (typeof answer === "string") return answer;
    return `task ${answer.taskId}: ${answer.status}${answer.statusMessage ? `: ${answer.statusMessage}` : ""}`;
  }
  const tool = /^(\w+) (\{.*\})( as a task)?$/.exec(filled);
  if (!tool) throw new Error(`docs/guide/mcp.md: no call in "${line}"`);
  const [, name, args, asTask] = tool;
  if (asTask) {
    const params = { name, arguments: JSON.parse(args as string), task: { ttl: 60_000 } };
    const { task: created } = await client.request({ method: "tools/call", params }, CreateTaskResultSchema);
    return `task ${created.taskId}: ${created.status}`;
  }
  return (await call(client, name as string, JSON.parse(args as string))).summary;
}

/** An answer line as a pattern: a known `<name>` is its id, a new one is learnt from the answer. */
export function linePattern(expected: string, ids: Map<string, string>): RegExp {
  const parts = expected.split(/<(\w+)>/);
  const source = parts
    .map((part, i) => {
      if (i % 2 === 0) return part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      const known = ids.get(part);
      return known ?? `(?<${part}>[0-9A-Za-z]+)`;
    })
    .join("");
  return new RegExp(`^${source}$`);
}
