import type { IncomingMessage, ServerResponse } from "node:http";
import { readBody } from "../http/request-body.ts";
import type { ClientErrorCode } from "../lib/errors.ts";
import { MAX_API_BODY_BYTES } from "../lib/limits.ts";
import type { McpHttpEndpoint } from "../mcp/http-sessions.ts";

/** Where the local stack serves MCP's Streamable HTTP. */
export const MCP_PATH = "/mcp";

/** A peer on this machine: the loopback addresses, IPv4-mapped ones included. */
export function isLoopbackPeer(address: string | undefined): boolean {
  if (address === undefined) return false;
  const v4 = address.startsWith("::ffff:") ? address.slice("::ffff:".length) : address;
  return v4 === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

/**
 * /mcp after the server's guard (another site's Origin, another Host: 403 before this): a peer off
 * this machine is refused too, whatever address the stack was told to listen on (MCP's own
 * advice for a local server), then a POST's JSON body is read and the session endpoint answers.
 */
export async function serveMcp(
  req: IncomingMessage,
  res: ServerResponse,
  mcp: McpHttpEndpoint,
  sendError: (res: ServerResponse, code: ClientErrorCode, message: string) => void,
): Promise<void> {
  if (!isLoopbackPeer(req.socket.remoteAddress)) {
    req.resume();
    sendError(res, "forbidden", "/mcp answers callers on this machine only");
    return;
  }
  if (req.method !== "POST") {
    await mcp.handle(req, res, undefined);
    return;
  }
  const read = await readBody(req, MAX_API_BODY_BYTES);
  if (read.kind === "aborted") return;
  if (read.kind === "too_large") {
    sendError(res, "payload_too_large", `the request body is over ${MAX_API_BODY_BYTES} bytes`);
    return;
  }
  let body: unknown;
  try {
    body = JSON.parse(read.body.toString("utf8"));
  } catch {
    res.writeHead(400, { "content-type": "application/json" });
    res.end(
      JSON.stringify({ jsonrpc: "2.0", error: { code: -32700, message: "the body is not JSON" }, id: null }),
    );
    return;
  }
  await mcp.handle(req, res, body);
}
