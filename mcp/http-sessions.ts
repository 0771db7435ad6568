import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";

/** How many sessions, and how long one may sit unused, before it is closed (its client can initialize again). */
export interface SessionLimits {
  /** Sessions at once; opening one more closes the one unused longest. */
  maxSessions: number;
  idleMs: number;
}

/** A loopback endpoint for the developer's own agents, not a public service. */
const DEFAULT_LIMITS: SessionLimits = { maxSessions: 64, idleMs: 30 * 60_000 };

interface Session {
  transport: StreamableHTTPServerTransport;
  lastUsed: number;
}

export interface McpHttpEndpoint {
  /** One request to /mcp: POST (its body already read and parsed), GET (the event stream) or DELETE. */
  handle(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void>;
  close(): Promise<void>;
}

/**
 * MCP's Streamable HTTP at one path (the local stack's /mcp), with sessions: an initialize opens
 * one (a server from `makeServer`, its own transport), its `mcp-session-id` names it after that.
 * The caller has already refused foreign callers (local/http-server.ts): this only speaks MCP.
 */
export function mcpHttpEndpoint(
  makeServer: () => Server | Promise<Server>,
  limits: SessionLimits = DEFAULT_LIMITS,
  now: () => number = Date.now,
): McpHttpEndpoint {
  const sessions = new Map<string, Session>();

  /** Closes the idle sessions, then the least recently used ones while there is no room for another. */
  async function makeRoom(): Promise<void> {
    const byUse = [...sessions.entries()].sort(([, a], [, b]) => a.lastUsed - b.lastUsed);
    const closing = byUse.filter(
      ([, s], i) => now() - s.lastUsed > limits.idleMs || byUse.length - i >= limits.maxSessions,
    );
    for (const [id] of closing) sessions.delete(id);
    await Promise.allSettled(closing.map(([, s]) => s.transport.close()));
  }

  async function open(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    await makeRoom();
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, lastUsed: now() });
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    const server = await makeServer();
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  return {
    async handle(req, res, body) {
      const header = req.headers["mcp-session-id"];
      const id = Array.isArray(header) ? header[0] : header;
      const session = id === undefined ? undefined : sessions.get(id);
      if (session) {
        session.lastUsed = now();
        await session.transport.handleRequest(req, res, body);
      } else if (id !== undefined) {
        rpcError(res, 404, -32001, "no such MCP session (it ended, or the stack restarted): initialize again");
      } else if (req.method === "POST" && isInitializeRequest(body)) {
        await open(req, res, body);
      } else {
        rpcError(res, 400, -32000, "no mcp-session-id: a session starts with an initialize request (POST)");
      }
    },
    async close() {
      await Promise.allSettled([...sessions.values()].map((s) => s.transport.close()));
      sessions.clear();
    },
  };
}

function rpcError(res: ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }));
}
