import type { IncomingMessage } from "node:http";
import { clip } from "../client/errors.ts";

/**
 * The loopback servers that act for the person at the keyboard (the local stack, with no
 * authentication at all, and `skyforge console`, which signs with the operator's credentials) answer
 * requests meant for them only. Any web page the operator has open can send requests to 127.0.0.1:
 * - a cross-site form POST (text/plain, so no CORS preflight) could enqueue jobs or pause queues;
 *   its Origin names the other site, so a request whose Origin is not this server's is refused;
 * - DNS rebinding (evil.example resolving to 127.0.0.1) would let the page read the answers too; its
 *   Host names the other site, so a request whose Host is not this server's address is refused.
 * Programs (Node's fetch, the AWS SDK, curl) send no Origin and a Host of the URL they were given:
 * 127.0.0.1:<port> or localhost:<port>. A request with no Host at all (HTTP/1.0) is no browser's.
 */
export interface OwnAddress {
  /** The port the server listens on. */
  port: number;
  /** The address it listens on, when it is not one of the loopback names (which are always its own). */
  host?: string;
}

const LOOPBACK_NAMES = ["127.0.0.1", "localhost", "[::1]"];
const WILDCARDS = new Set(["", "0.0.0.0", "::", "[::]"]);

/**
 * Why the request is not for this server (another Host, another site's Origin), or undefined. The
 * servers answer it 403 `forbidden` (a browser's request they refuse to serve, not a malformed one).
 */
export function foreignRequest(req: IncomingMessage, own: OwnAddress): string | undefined {
  const host = req.headers.host?.toLowerCase();
  if (host !== undefined && !ownHosts(own).has(host)) {
    return `this server answers requests for its own address only (127.0.0.1:${own.port}), not Host ${JSON.stringify(clip(host, 100))}`;
  }
  const origin = req.headers.origin;
  if (origin !== undefined && (host === undefined || origin.toLowerCase() !== `http://${host}`)) {
    return `a request from another site's page (Origin ${JSON.stringify(clip(origin, 100))}) is refused: only this server's own page may call it`;
  }
  return undefined;
}

/** The Host values a browser sends for this server: name:port, and the bare name on port 80. */
function ownHosts({ port, host }: OwnAddress): Set<string> {
  const names = [...LOOPBACK_NAMES];
  const bound = host?.toLowerCase();
  if (bound !== undefined && !WILDCARDS.has(bound)) names.push(bound.includes(":") ? `[${bound}]` : bound);
  return new Set(names.flatMap((name) => (port === 80 ? [`${name}:80`, name] : [`${name}:${port}`])));
}
