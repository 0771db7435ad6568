import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createClient } from "../../client/create-client.ts";
import { httpTransport } from "../../client/http-transport.ts";
import type { AppNames } from "../../lib/declarations/app-names.ts";
import { type McpHttpEndpoint, mcpHttpEndpoint } from "../../mcp/http-sessions.ts";
import { createMcpServer } from "../../mcp/server.ts";
import { waitFor } from "../support/wait.ts";

/**
 * /mcp's sessions (mcp/http-sessions.ts): at most `maxSessions`, the one unused longest closed to
 * make room, and one idle past `idleMs` closed when the next opens. Listing tools needs no API, so
 * the servers' client points at a port nothing answers; the clock is injected.
 */
let http: Server;
let endpoint: McpHttpEndpoint;
let url: string;
let clock = 0;
const clients: Client[] = [];
/** Sessions whose client has opened its event stream (GET), which counts as a use at that time. */
const streams = new Set<string>();

function serve(limits: { maxSessions: number; idleMs: number }): Promise<void> {
  endpoint = mcpHttpEndpoint(
    () =>
      createMcpServer({
        client: createClient<AppNames>({ transport: httpTransport({ url: "http://127.0.0.1:9" }) }),
        kinds: [],
      }),
    limits,
    () => clock,
  );
  http = createServer(async (req, res) => {
    const id = req.headers["mcp-session-id"];
    if (req.method === "GET" && typeof id === "string") streams.add(id);
    let text = "";
    for await (const chunk of req) text += chunk;
    await endpoint.handle(req, res, text ? JSON.parse(text) : undefined);
  });
  return new Promise((resolve) =>
    http.listen(0, "127.0.0.1", () => {
      url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
      resolve();
    }),
  );
}

async function session(): Promise<Client> {
  const client = new Client({ name: "sessions-test", version: "1" });
  const transport = new StreamableHTTPClientTransport(new URL(url));
  await client.connect(transport);
  clients.push(client);
  // The client opens its stream after initializing, on its own: awaited, so it is used at this clock.
  await waitFor(
    async () => streams.has(transport.sessionId as string),
    "the session's event stream",
    5_000,
    10,
  );
  return client;
}

const lists = (client: Client) =>
  client.listTools().then(
    (r) => r.tools.length > 0,
    () => false,
  );

beforeEach(() => {
  clock = 0;
});
afterEach(async () => {
  await Promise.allSettled(clients.splice(0).map((c) => c.close()));
  await endpoint.close();
  await new Promise<void>((resolve) => {
    http.close(() => resolve());
    http.closeAllConnections();
  });
});

describe("/mcp's sessions", () => {
  it("keep at most maxSessions: a new one closes the one unused longest", async () => {
    await serve({ maxSessions: 2, idleMs: 60_000 });
    const first = await session();
    clock = 1;
    const second = await session();
    clock = 2;
    expect(await lists(first)).toBe(true); // used last now: the second is the one unused longest
    clock = 3;
    const third = await session();
    expect([await lists(first), await lists(second), await lists(third)]).toEqual([true, false, true]);
  });

  it("close a session idle past idleMs when the next one opens", async () => {
    await serve({ maxSessions: 10, idleMs: 1_000 });
    const idle = await session();
    clock = 500;
    const recent = await session();
    clock = 1_200;
    const next = await session();
    expect([await lists(idle), await lists(recent), await lists(next)]).toEqual([false, true, true]);
  });
});
