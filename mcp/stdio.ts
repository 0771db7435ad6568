import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { type McpKindSource, mcpKinds } from "./kind-tools.ts";
import { createMcpServer } from "./server.ts";
import type { McpClient } from "./tool.ts";

/** Serves MCP on this process's stdin/stdout until the client closes stdin (or the transport fails). */
export async function serveStdio(options: { client: McpClient; app: McpKindSource; readOnly: boolean }): Promise<void> {
  const server = createMcpServer({ client: options.client, kinds: await mcpKinds(options.app), readOnly: options.readOnly });
  const transport = new StdioServerTransport();
  const ended = new Promise<void>((resolve) => {
    process.stdin.once("end", resolve);
    process.stdin.once("close", resolve);
    transport.onclose = resolve;
  });
  await server.connect(transport);
  await ended;
  await server.close();
}
